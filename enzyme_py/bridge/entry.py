"""The one builder of @njit entries around a generated function (target-neutral).

Every mode calls its generated function the same way: an @intrinsic that emits the call and
returns (status, excinfo, result), and an @njit entry that calls the intrinsic, raises the
kernel's exception, if any (after Numba has released the arrays the entry holds: an error
returned from inside an expression would skip those decrefs), and returns the result. Numba
lowers `*args` of an intrinsic as one tuple, so both spell their parameters out (exec).
"""
from __future__ import annotations

import re
from typing import Callable

import numba
from numba.extending import intrinsic


def make_intrinsic(name: str, params: list, typer: Callable, label: str):
    """An @intrinsic `name(typingctx, *params)` whose typing is `typer(args)` -> (signature,
    codegen); `label` names its source in tracebacks."""
    names = ", ".join(params)
    src = f"def {name}(typingctx, {names}):\n    return typer(({names},))\n"
    scope = {"typer": typer}
    exec(compile(src, f"<enzyme_py {label}>", "exec"), scope)
    return intrinsic(scope[name])


def make_entry(call, params: list, label: str, raise_status, qualname: str | None = None):
    """The @njit entry `entry(*params)` around intrinsic `call`, which returns (status, excinfo,
    result): it raises with `raise_status(status, excinfo)` (the target's), then returns the
    result. It releases the GIL. It has no cfunc wrapper (nothing takes its address; Numba's
    wrapper module would cost about a third of the entry's compile). `qualname` (default: from
    `label`) gives the entry a symbol of its own (the disk cache loads entries by it)."""
    names = ", ".join(params)
    src = (f"def entry({names}):\n"
           f"    status, exc, out = call({names})\n"
           f"    raise_status(status, exc)\n"
           f"    return out\n")
    scope = {"call": call, "raise_status": raise_status}
    exec(compile(src, f"<enzyme_py {label}>", "exec"), scope)
    fn = scope["entry"]
    fn.__qualname__ = qualname or re.sub(r"\W", "_", label)
    return numba.njit(nogil=True, no_cfunc_wrapper=True)(fn)


def compile_entry(entry, signature, convert: bool) -> None:
    """Compile `entry` for `signature` (the kernel's argument types as captured, then shadows,
    seeds or tangents). `convert`: capture resolved the call to a declared signature other than
    the values' own types (an explicit `@njit("f4(f4)")`); the entry then takes no other
    signature, so Numba converts the arguments to it as it does for the kernel."""
    entry.compile(tuple(signature))
    if convert:
        entry.disable_compile()
