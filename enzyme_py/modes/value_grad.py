"""Value and gradient in one reverse-mode call.

The reverse-mode gradient function runs the primal before its reverse sweep, so the kernel's
return value is in %retptr when it returns. `value_entry(grad)` is an @njit entry over the same
compiled gradient (reverse.py) that also returns it:

    entry(*primal_args, *shadows, seed) -> (value, (derivatives of the Active arguments))
"""
from __future__ import annotations

import threading

import numpy as np
from numba.core import types

from ..annotations import Active, Const, Duplicated
from ..bridge.codegen import array_data, call_generated, float_slot, raise_status, status_type
from ..bridge.convention import returns_float
from ..bridge.entry import make_entry, make_intrinsic
from .reverse import compile_gradient

_lock = threading.RLock()
_entries: dict = {}   # gradient symbol -> entry


def value_entry(grad):
    """The @njit value-and-gradient entry of a CompiledGradient (see the module docstring)."""
    spec = grad.spec
    if not returns_float(spec.restype):
        raise TypeError(f"value_and_grad needs a kernel returning a float, not {spec.restype}")
    with _lock:
        entry = _entries.get(spec.name)
        if entry is None:
            entry = _entries[spec.name] = _make_entry(spec, grad.library)
    return entry


def value_and_gradient(f, x, *const):
    """(f(x, *const), df/dx) for a scalar kernel, one reverse-mode call."""
    consts = [c if isinstance(c, Const) else Const(c) for c in const]
    plain = [c.value for c in consts]
    if isinstance(x, np.ndarray):
        dx = np.zeros_like(x)
        grad = compile_gradient(f, Duplicated(x, dx), *consts)
        value, _ = value_entry(grad)(x, *plain, dx, 1.0)
        return value, dx
    grad = compile_gradient(f, Active(float(x)), *consts)
    value, (dx,) = value_entry(grad)(float(x), *plain, 1.0)
    return value, dx


def _param_names(spec):
    return [f"a{i}" for i in range(len(spec.argtypes))] + [f"s{i}" for i in spec.dup_positions] + ["seed"]


def _make_call(spec, library):
    nargs = len(spec.argtypes)
    derivs = types.Tuple([spec.argtypes[i] for i in spec.active_positions])
    out_type = status_type(types.Tuple([spec.restype, derivs]))

    def typer(args):
        return out_type(*args), codegen

    def codegen(context, builder, sig, llargs):
        rt = spec.restype
        seed = float_slot(context, builder, rt)
        builder.store(context.cast(builder, llargs[-1], sig.args[-1], rt), seed)
        shadows = [array_data(context, builder, t, v) for t, v in zip(sig.args[nargs:-1], llargs[nargs:-1])]
        outs = [float_slot(context, builder, spec.argtypes[i]) for i in spec.active_positions]
        retptr, code, exc = call_generated(context, builder, spec.name, spec.argtypes, rt,
                                           llargs[:nargs], [seed] + shadows + outs, library)
        ds = context.make_tuple(builder, derivs, [builder.load(o) for o in outs])
        result = context.make_tuple(builder, sig.return_type.types[2], [builder.load(retptr), ds])
        return context.make_tuple(builder, sig.return_type, [code, exc, result])

    return make_intrinsic("value_call", _param_names(spec), typer, f"value+gradient {spec.name}")


def _make_entry(spec, library):
    return make_entry(_make_call(spec, library), _param_names(spec),
                      f"value+gradient entry {spec.name}", raise_status)
