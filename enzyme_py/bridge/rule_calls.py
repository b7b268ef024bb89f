"""Calls to @njit functions that carry a custom derivative rule (enzyme_py.custom_vjp,
custom_jvp, inactive).

Cleanup inlines every callee, so AD would see the function's body. In the captured module the
body of each specialisation of a function with a rule is replaced before cleanup by two calls
through function pointers, the way Numba calls a ctypes function (a load of a
`numba.dynamic.globals.<address>` global, which ir_passes names the call by):

    %st = call i32 %compiled(ptr %retptr, ptr %excinfo, args)  ; the overload itself: inactive
    if %st != 0: return %st                                  ; its exceptions propagate
    %y = call double %ruled(args, double %y0)   ; y0 read from %retptr; returns y0; partials: the rule's

The first is the function's own compiled code (its value, its exceptions); the second, a
cfunc returning its last argument, carries the rule (custom.py registers its partials with
ir_passes). An `inactive` function needs only the first. The IR is rule_calls.ll's.
"""
import re
import threading
from pathlib import Path
from typing import Callable

from numba.core import types

from ir_passes import fill_template, read_pieces

_lock = threading.Lock()
# id(dispatcher): (dispatcher, resolve, token). resolve(dispatcher, argtypes, restype, compiled)
# registers the rules and returns the ruled cfunc's address (None: inactive); token: a text
# that changes when the rule's code does (the disk-cache key reads it)
_RULED: dict = {}

SCALARS = (types.Float, types.Integer)
PIECES = read_pieces(Path(__file__).with_suffix(".ll"))


def register(dispatcher, resolve: Callable, token: str, scalars: bool = True) -> None:
    """`scalars`: the rule is for functions of float and integer scalars returning one (an
    inactive function takes and returns anything)."""
    with _lock:
        _RULED[id(dispatcher)] = (dispatcher, resolve, token, scalars)


def token(dispatcher) -> str:
    """The rule of `dispatcher` by its code ("" without one): the disk-cache key of a kernel that
    calls it reads it, so a rule added, changed or removed changes the key."""
    entry = _RULED.get(id(dispatcher))
    return entry[2] if entry is not None and entry[0] is dispatcher else ""


def llvm_type(t) -> str:
    if isinstance(t, types.Float):
        return "double" if t.bitwidth == 64 else "float"
    if isinstance(t, types.Integer):
        return f"i{t.bitwidth}"
    raise TypeError(t)


def slot(address: int) -> str:
    """The name of the global holding `address` (Numba's for a ctypes function's)."""
    return f"numba.dynamic.globals.{address:x}"


def slots(*addresses: int) -> str:
    """The globals holding `addresses` (rule_calls.ll: slot), one a line."""
    return "".join(fill_template(PIECES["slot"], SLOT=slot(a), ADDRESS=a) + "\n" for a in addresses)


def trampoline(name: str, compiled: int, ruled: int | None, argtypes, restype) -> str:
    """The definition of `name` (Numba's calling convention) as a call of its compiled code at
    address `compiled`, whose result then passes through the ruled cfunc at `ruled` (if any)."""
    params = ", ".join(f"{llvm_type(t)} %a{k}" for k, t in enumerate(argtypes))
    sep = ", " if params else ""
    ret = llvm_type(restype)
    if ruled is None:
        result, extra = dict(RESULT=PIECES["plain"], Y="%y0"), []
    else:
        result, extra = dict(RESULT=PIECES["ruled"], Y="%y", SLOT=slot(ruled), RULE_ARGS=params + sep), [ruled]
    body = fill_template(PIECES["trampoline"], NAME=name, PARAMS=sep + params, COMPILED=slot(compiled),
                         RET=ret, **result)
    return slots(compiled, *extra) + body + "\n"


def forwarding(definition: str, compiled: int) -> str:
    """`definition` (any signature) with its body replaced by a call of the compiled code at
    `compiled` with the same arguments, returning its status."""
    header = definition[:definition.index("{\n") + 1]
    inner = header[header.index("(", header.index("@")) + 1:header.rindex(")")]
    params, depth, start = [], 0, 0
    for k, ch in enumerate(inner + ","):
        depth += ch in "({[" and 1 or ch in ")}]" and -1 or 0
        if ch == "," and depth == 0:
            params.append(inner[start:k].split())
            start = k + 1
    args = ", ".join(f"{p[0]} {p[-1]}" for p in params)
    return slots(compiled) + fill_template(PIECES["forwarding"], HEADER=header, COMPILED=slot(compiled),
                                            ARGS=args) + "\n"


def _constant_memory(t) -> bool:
    """Is an argument of type t free of memory that can hold derivatives?"""
    if isinstance(t, (types.Number, types.Boolean)):
        return True
    if isinstance(t, types.Array):
        return isinstance(t.dtype, (types.Integer, types.Boolean))
    if isinstance(t, types.BaseTuple):
        return all(map(_constant_memory, t))
    return False


def _definition(text: str, name: str):
    return re.search(r'^define [^\n]*@"?' + re.escape(name) + r'"?\(.*?^}\n', text, re.M | re.S)


def substitute(text: str) -> str:
    """`text` with every specialisation of a ruled function it defines replaced by a trampoline
    (the rule is compiled and checked here, at its first use)."""
    for dispatcher, resolve, _, scalars in list(_RULED.values()):
        for argtypes, cres in list(dispatcher.overloads.items()):
            m = _definition(text, cres.fndesc.mangled_name)
            if m is None:
                continue
            restype = cres.signature.return_type
            if scalars and not all(isinstance(t, SCALARS) for t in (*argtypes, restype)):
                raise TypeError(f"the custom rule of `{dispatcher.__name__}` is for functions of "
                                f"float and integer scalars returning one; this call passes "
                                f"({', '.join(map(str, argtypes))}) -> {restype}")
            if not scalars and not all(map(_constant_memory, argtypes)):
                raise TypeError(f"inactive `{dispatcher.__name__}` takes "
                                f"({', '.join(map(str, argtypes))}): an inactive function may "
                                f"take scalars and integer or boolean arrays only (its writes to a "
                                f"float array would carry no derivative)")
            name = cres.fndesc.mangled_name
            compiled = cres.library.get_pointer_to_function(name)
            ruled = resolve(dispatcher, tuple(argtypes), restype, compiled)
            body = (trampoline(name, compiled, ruled, argtypes, restype) if scalars
                    else forwarding(m.group(0), compiled))
            text = text[:m.start()] + body + text[m.end():]
    return text
