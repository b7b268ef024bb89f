"""Calls to @njit functions that carry a custom derivative rule (enzyme_py.custom_vjp,
custom_jvp, inactive).

Cleanup inlines every callee, so AD would see the function's body. In the captured module the
body of each specialisation of a function with a rule is replaced by a call through a function
pointer to a C-callable copy of it (a Numba cfunc of the same arguments), the way Numba calls a
ctypes function: ir_passes recognises that call by the pointer's global
(`numba.dynamic.globals.<address>`) and applies the rule registered for it (custom.py).
"""
import re
import threading
from typing import Callable

from numba.core import types

_lock = threading.Lock()
# id(dispatcher): (dispatcher, resolve, token); resolve(dispatcher, argtypes, restype) -> cfunc
# address; token: a text that changes when the rule's code does (the disk-cache key reads it)
_RULED: dict = {}

SCALARS = (types.Float, types.Integer)


def register(dispatcher, resolve: Callable, token: str) -> None:
    with _lock:
        _RULED[id(dispatcher)] = (dispatcher, resolve, token)


def fingerprint() -> str:
    """Every rule in force, by function and rule code (part of the disk-cache key)."""
    return repr(sorted((f"{d.py_func.__module__}.{d.py_func.__qualname__}", token)
                       for d, _, token in _RULED.values()))


def llvm_type(t) -> str:
    if isinstance(t, types.Float):
        return "double" if t.bitwidth == 64 else "float"
    if isinstance(t, types.Integer):
        return f"i{t.bitwidth}"
    raise TypeError(t)


def trampoline(name: str, address: int, argtypes, restype) -> str:
    """The definition of `name` (Numba's calling convention) as a call of the cfunc at `address`."""
    params = ", ".join(f"{llvm_type(t)} %a{k}" for k, t in enumerate(argtypes))
    args = ", ".join(f"{llvm_type(t)} %a{k}" for k, t in enumerate(argtypes))
    ret = llvm_type(restype)
    slot = f"numba.dynamic.globals.{address:x}"
    return (f'@"{slot}" = linkonce global ptr inttoptr (i64 {address} to ptr)\n'
            f'define linkonce_odr i32 @"{name}"(ptr noalias %retptr, ptr noalias %excinfo'
            f'{", " if params else ""}{params}) {{\nentry:\n'
            f'  %fn = load ptr, ptr @"{slot}"\n'
            f'  %y = call {ret} %fn({args})\n'
            f'  store {ret} %y, ptr %retptr\n'
            f'  ret i32 0\n}}\n')


def _definition(text: str, name: str):
    return re.search(r'^define [^\n]*@"?' + re.escape(name) + r'"?\(.*?^}\n', text, re.M | re.S)


def substitute(text: str) -> str:
    """`text` with every specialisation of a ruled function it defines replaced by a trampoline
    to its cfunc (the rule is compiled and checked here, at its first use)."""
    for dispatcher, resolve, _ in list(_RULED.values()):
        for argtypes, cres in list(dispatcher.overloads.items()):
            m = _definition(text, cres.fndesc.mangled_name)
            if m is None:
                continue
            restype = cres.signature.return_type
            if not all(isinstance(t, SCALARS) for t in (*argtypes, restype)):
                raise TypeError(f"the custom rule of `{dispatcher.__name__}` is for functions of "
                                f"float and integer scalars returning one; this call passes "
                                f"({', '.join(map(str, argtypes))}) -> {restype}")
            address = resolve(dispatcher, tuple(argtypes), restype)
            text = (text[:m.start()] + trampoline(cres.fndesc.mangled_name, address, argtypes, restype)
                    + text[m.end():])
    return text
