"""Custom derivatives: for C functions called from a kernel through ctypes or cffi (or any
function pointer Numba calls through a dynamic global), and for @njit functions
(`custom_vjp`, `custom_jvp`, `inactive`; docs/custom-rules.md).

An @njit function with a rule reaches ir_passes as a call to a C-callable copy of itself
(bridge/rule_calls.py); its partial derivatives are C-callable @njit functions built from the
user's rule, registered exactly like a C function's partials."""
from __future__ import annotations

import ctypes
import hashlib
from typing import Any, Sequence

import numba
import numpy as np
from numba.core import types
from numba.core.dispatcher import Dispatcher

from ir_passes import register_external

from .annotations import Active, Const
from .api import autodiff, clear_cache
from .bridge import rule_calls


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


# ---- rules for @njit functions ----------------------------------------------------------------

def _dispatcher(fn, what: str):
    if not isinstance(fn, Dispatcher):
        if not callable(fn):
            raise TypeError(f"{what} takes an @njit function, not {type(fn).__name__}")
        fn = numba.njit(fn)
    if fn.targetoptions.get("inline", "never") != "never":
        raise TypeError(f"{what}: `{fn.__name__}` is inlined by Numba (inline=...), so its calls "
                        f"cannot be found in a kernel's code; drop the inline option")
    return fn


def custom_vjp(fn):
    """Give the @njit function `fn` a reverse rule: `fn.defvjp(fwd, bwd)` with @njit `fwd(*args)
    -> (fn(*args), residuals)` and `bwd(residuals, g) -> (cotangent of each argument,)`.
    Kernels that call `fn`, at any depth, use the rule in every mode."""
    fn = _dispatcher(fn, "custom_vjp")
    fn.defvjp = lambda fwd, bwd: _define(fn, "vjp", (_dispatcher(fwd, "defvjp"),
                                                      _dispatcher(bwd, "defvjp")))
    return fn


def custom_jvp(fn):
    """Give the @njit function `fn` a tangent rule: `fn.defjvp(jvp)` with @njit
    `jvp(primals, tangents) -> (fn(*primals), tangent of the result)`, primals and tangents
    tuples of `fn`'s arguments. Kernels that call `fn` use it in every mode."""
    fn = _dispatcher(fn, "custom_jvp")
    fn.defjvp = lambda jvp: _define(fn, "jvp", (_dispatcher(jvp, "defjvp"),))
    return fn


def inactive(fn):
    """Mark the @njit function `fn` as having no derivative (a random number source, a logger,
    a counter): its results are constants in every gradient."""
    fn = _dispatcher(fn, "inactive")
    _define(fn, "inactive", ())
    return fn


def implicit(residual):
    """Decorator for an @njit solver `solve(*params) -> x` (float scalars) whose result solves
    `residual(x, *params) == 0`: kernels that call the solver differentiate the solution by the
    implicit function theorem, dx/dp_k = -(dg/dp_k) / (dg/dx) at the solver's x, with g's
    partials from reverse mode of `residual`; the solver's iterations are not differentiated
    (nothing of them is taped).

        @enzyme_py.implicit(kepler_residual)      # E - e sin E - M
        @numba.njit
        def eccentric_anomaly(M, e): ...          # Newton's iterations
    """
    residual = _dispatcher(residual, "implicit")

    def mark(fn):
        fn = _dispatcher(fn, "implicit")
        _define(fn, "implicit", (residual,))
        return fn
    return mark


def _define(fn, kind: str, rule: tuple) -> None:
    compiled: dict = {}     # argtypes: (cfuncs kept alive, address of the ruled cfunc)

    def resolve(dispatcher, argtypes, restype, address) -> int | None:
        if argtypes not in compiled:
            compiled[argtypes] = _compile(dispatcher, kind, rule, argtypes, restype, address)
        return compiled[argtypes][1]
    rule_calls.register(fn, resolve, repr([kind] + [_code_token(r) for r in rule]),
                        scalars=kind != "inactive")
    clear_cache()


def _code_token(dispatcher) -> str:
    """A digest of a rule function's code (its bytecode and constants)."""
    code = dispatcher.py_func.__code__
    return hashlib.sha256(code.co_code + repr(code.co_consts).encode()).hexdigest()[:16]


def _compile(fn, kind, rule, argtypes, restype, address) -> tuple:
    """Register the rule of fn's overload for `argtypes`, compiled at `address`: the overload's
    calls are inactive; for a vjp or jvp, a cfunc passing fn's result through (its last
    argument) carries the partials, cfuncs built from the rule. Returns (the cfuncs, the address
    of the passing one or None)."""
    register_external(callee_key(address), [], inactive_fn=True)
    if kind == "inactive":
        return [], None
    if not isinstance(restype, types.Float):
        raise TypeError(f"`{fn.__name__}{argtypes}` returns {restype}: a custom rule needs a "
                        f"float result (mark it enzyme_py.inactive instead)")
    n = len(argtypes)
    names = ", ".join(f"a{k}" for k in range(n))
    floats = [k for k, t in enumerate(argtypes) if isinstance(t, types.Float)]
    if kind == "vjp":
        fwd, bwd = rule
        _check_vjp(fn, fwd, bwd, argtypes, restype, floats)
        pick = "[{k}]" if n > 1 or _returns_tuple(bwd) else ""
        bodies = {k: f"r = fwd({names})[1]; return bwd(r, {_one(restype)})" + pick.format(k=k)
                  for k in floats}
        env = {"fwd": fwd, "bwd": bwd}
    elif kind == "implicit":
        (residual,) = rule
        grad = _residual_gradient(fn, residual, argtypes, restype)
        bodies = {k: f"d = grad(a{n}, {names}); return -d[{k + 1}] / d[0]" for k in floats}
        env = {"grad": grad}
    else:
        (jvp,) = rule
        _check_jvp(fn, jvp, argtypes, restype)
        bodies = {}
        for k in floats:
            tangents = ", ".join((_one(t) if j == k else _zero(t)) for j, t in enumerate(argtypes))
            bodies[k] = f"return jvp(({names},), ({tangents},))[1]"
        env = {"jvp": jvp}
    inputs = (*argtypes, restype)      # the ruled call's arguments: fn's and fn's result
    passing = _cfunc(restype, inputs, f"return a{n}")
    partials = {k: _cfunc(argtypes[k], inputs, body, **env) for k, body in bodies.items()}
    register_external(callee_key(passing.address),
                      [partials[k].address if k in partials else None for k in range(n)] + [0])
    return [passing, *partials.values()], passing.address


def _residual_gradient(fn, residual, argtypes, restype):
    """An @njit `grad(x, *params)`: reverse mode of `residual` at (x, params), its float
    arguments Active (the others Const)."""
    rtype = _compiled_type(fn, residual, (restype, *argtypes), "the residual g(x, *params)")
    if not isinstance(rtype, types.Float):
        raise _rule_error(fn, argtypes, f"the residual must return a float, not {rtype}")
    names = ", ".join(f"a{k}" for k in range(len(argtypes)))
    wrapped = ", ".join(f"{'Active' if isinstance(t, types.Float) else 'Const'}(a{k})"
                        for k, t in enumerate(argtypes))
    scope = {"autodiff": autodiff, "Active": Active, "Const": Const, "residual": residual}
    exec(f"def grad(x, {names}):\n    return autodiff(residual, Active(x), {wrapped})\n",  # noqa: S102
         scope)
    return numba.njit(scope["grad"])


def _one(t) -> str:
    return f"np.{t}(1.0)" if isinstance(t, types.Float) else "0"


def _zero(t) -> str:
    return f"np.{t}(0.0)" if isinstance(t, types.Float) else "0"


def _cfunc(restype, argtypes, body: str, **env):
    names = ", ".join(f"a{k}" for k in range(len(argtypes)))
    scope = {"np": np, **env}
    exec(f"def rule({names}):\n    {body}\n", scope)   # noqa: S102 - a fixed template
    return numba.cfunc(restype(*argtypes))(scope["rule"])


def _returns_tuple(bwd) -> bool:
    return any(isinstance(c.signature.return_type, types.BaseTuple) for c in bwd.overloads.values())


def _rule_error(fn, argtypes, msg: str) -> TypeError:
    sig = ", ".join(map(str, argtypes))
    return TypeError(f"custom rule of `{fn.__name__}({sig})`: {msg}")


def _compiled_type(fn, disp, argtypes, what: str):
    try:
        disp.compile(tuple(argtypes))
    except Exception as exc:   # noqa: BLE001 - Numba's typing error, shown with the rule's name
        raise _rule_error(fn, argtypes, f"{what} does not compile for "
                                        f"({', '.join(map(str, argtypes))}): {exc}") from exc
    return disp.overloads[tuple(argtypes)].signature.return_type


def _check_vjp(fn, fwd, bwd, argtypes, restype, floats) -> None:
    out = _compiled_type(fn, fwd, argtypes, "fwd")
    if not (isinstance(out, types.BaseTuple) and len(out) == 2):
        raise _rule_error(fn, argtypes, f"fwd must return (result, residuals), not {out}")
    if out[0] != restype:
        raise _rule_error(fn, argtypes, f"fwd's result is {out[0]}, the function's is {restype}")
    cot = _compiled_type(fn, bwd, (out[1], restype), "bwd(residuals, g)")
    n = len(argtypes)
    if isinstance(cot, types.BaseTuple):
        if len(cot) != n or any(not isinstance(cot[k], types.Float) for k in floats):
            raise _rule_error(fn, argtypes, f"bwd must return one cotangent per argument ({n}), "
                                            f"floats for the float arguments, not {cot}")
    elif not (n == 1 and isinstance(cot, types.Float)):
        raise _rule_error(fn, argtypes, f"bwd must return a tuple of {n} cotangents, not {cot}")


def _check_jvp(fn, jvp, argtypes, restype) -> None:
    tangents = types.Tuple([t if isinstance(t, types.Float) else types.int64 for t in argtypes])
    out = _compiled_type(fn, jvp, (types.Tuple(argtypes), tangents), "jvp(primals, tangents)")
    if not (isinstance(out, types.BaseTuple) and len(out) == 2 and out[0] == restype
            and isinstance(out[1], types.Float)):
        raise _rule_error(fn, argtypes, f"jvp must return (result: {restype}, tangent: float), "
                                        f"not {out}")
