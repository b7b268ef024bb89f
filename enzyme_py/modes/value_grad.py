"""The primal value with the derivatives (`ReverseWithPrimal`, `ForwardWithPrimal`).

The reverse-mode gradient function runs the primal before its reverse sweep, so the kernel's
return value is in %retptr when it returns. `value_entry(grad)` is an @njit entry over the same
compiled gradient (reverse.py) that also returns it, whatever its type (a float, an array, a
tuple, None): the caller owns the returned value, where the plain entry releases it.

    entry(*primal_args, *shadows, seed) -> (value, (derivatives of the Active arguments))

`seed` seeds a float return value and is ignored otherwise. `forward_value_entry(fwd)` is the
same for forward mode: entry(*primal_args, *shadows, *tangents) -> (value, (t_1, ..., t_k)).
"""
from __future__ import annotations

import threading

from numba.core import types

from ..bridge.codegen import call_generated, float_slot, raise_status, shadow_pointer, status_type
from ..bridge.convention import returns_float
from ..bridge.entry import make_entry, make_intrinsic
from .forward import make_forward_call
from .forward import param_names as forward_params

_lock = threading.RLock()
_entries: dict = {}   # gradient symbol -> entry


def value_entry(grad):
    """The @njit value-and-gradient entry of a CompiledGradient (see the module docstring)."""
    spec = grad.spec
    with _lock:
        entry = _entries.get(spec.name)
        if entry is None:
            entry = _entries[spec.name] = _make_entry(spec, grad.library)
    return entry


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
        seed = []
        if returns_float(rt):     # the seed slot is %retptr's shadow (reverse.py)
            seed = [float_slot(context, builder, rt)]
            builder.store(context.cast(builder, llargs[-1], sig.args[-1], rt), seed[0])
        shadows = [shadow_pointer(context, builder, t, v) for t, v in zip(sig.args[nargs:-1], llargs[nargs:-1])]
        outs = [float_slot(context, builder, spec.argtypes[i]) for i in spec.active_positions]
        retptr, code, exc = call_generated(context, builder, spec.name, spec.argtypes, rt,
                                           llargs[:nargs], seed + shadows + outs, library)
        ds = context.make_tuple(builder, derivs, [builder.load(o) for o in outs])
        # The reference the return value holds passes to the caller (zeroed on an error).
        value = context.get_returned_value(builder, rt, builder.load(retptr))
        result = context.make_tuple(builder, sig.return_type.types[2], [value, ds])
        return context.make_tuple(builder, sig.return_type, [code, exc, result])

    return make_intrinsic("value_call", _param_names(spec), typer, f"value+gradient {spec.name}")


def _make_entry(spec, library):
    return make_entry(_make_call(spec, library), _param_names(spec),
                      f"value+gradient entry {spec.name}", raise_status)


def forward_value_entry(fwd):
    """The forward entry of a CompiledForward that returns the kernel's return value whatever
    its type: entry(*primal_args, *shadows, *tangents) -> (value, (t_1, ..., t_k))."""
    spec = fwd.spec
    key = ("forward", spec.name)
    with _lock:
        entry = _entries.get(key)
        if entry is None:
            entry = _entries[key] = make_entry(
                make_forward_call(spec, fwd.library, keep_value=True), forward_params(spec),
                f"forward value entry {spec.name}", raise_status)
    return entry
