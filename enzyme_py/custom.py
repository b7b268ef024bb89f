"""Custom derivatives for functions enzyme_py cannot see into: C functions called from a kernel
through ctypes or cffi (or any function pointer Numba calls through a dynamic global)."""
from __future__ import annotations

import ctypes
from typing import Any, Sequence

from ir_passes import register_external

from .api import clear_cache


def address_of(fn) -> int:
    """The machine address of a ctypes or cffi function, or an int address."""
    if isinstance(fn, int):
        return fn
    if isinstance(fn, ctypes._CFuncPtr):
        return ctypes.cast(fn, ctypes.c_void_p).value
    try:  # cffi: ffi.cast("uintptr_t", fn) needs the ffi; cffi functions expose it via ffi
        import cffi
        return int(cffi.FFI().cast("uintptr_t", fn))
    except Exception as exc:  # noqa: BLE001
        raise TypeError(f"register_derivative needs a ctypes or cffi function or an address, "
                        f"not {type(fn).__name__}") from exc


def callee_key(fn) -> str:
    """How ir_passes names a call to `fn` in Numba's IR (Numba loads the pointer from a global
    named after the address)."""
    return f"numba.dynamic.globals.{address_of(fn):x}"


def register_derivative(fn: Any, partials: Sequence | None = None, *, inactive: bool = False) -> None:
    """Tell enzyme_py how to differentiate calls to the external function `fn`.

    - `inactive=True`: calls never carry derivatives (a logger, a random number source).
    - `partials`: one entry per argument of `fn`: a C function (ctypes/cffi) of the same
      arguments returning the partial derivative of `fn` with respect to that argument, `0` when
      it is zero, or None when `fn` is not differentiable in it (an error if that argument is
      active). Forward and reverse rules both follow from the partials.

    Gradients already compiled are forgotten, so the next call uses the new rule.
    """
    if not inactive and partials is None:
        raise TypeError("give the partial derivatives, or inactive=True")
    addresses = [] if inactive else [None if p is None else (0 if p == 0 else address_of(p))
                                     for p in partials]
    register_external(callee_key(fn), addresses, inactive_fn=inactive)
    clear_cache()
