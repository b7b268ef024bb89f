"""Hessian-vector products by forward mode over reverse mode.

For a kernel `f(x, *const)` returning a float, with x a float array:

1. reverse mode makes the gradient G(x, ..., seed slot, gx): it runs f and adds seed * df/dx
   into gx (docs/internals.md);
2. LLVM's O2 cleans G up (the tape frame becomes registers, the runtime helpers are inlined;
   tape arrays are not kept between calls: ir_passes' fresh_tapes); G is printed with the
   kernel's line locations (print_module's locate_generated), so forward mode's refusals name them;
3. forward mode differentiates G itself, with x, %retptr and gx duplicated and the seed slot
   constant (the seed does not vary with x): the shadow of x holds the direction v, and the
   shadow of gx leaves holding d(gx)/dx . v = H v.
   The tangent of %retptr (the directional derivative of f) is not read: its stores are left
   out, and LLVM deletes the tangent arithmetic of the primal part that only fed them.
   Forward mode handles everything the reverse sweep emits: the tape arrays (malloc / realloc /
   free) get shadow tapes, pointers stored in the frame get shadow pointers.

No finite differences are involved. `width` k > 1 gives k products in one call (the full
Hessian is `hessian`, columns in chunks of up to 16).

The entry `entry(x, *const, seed, gx, v_1..v_k, hv_1..hv_k) -> f(x)`
is @njit and callable from @njit code; gx receives seed * grad f, hv_j receives seed * H v_j
(both added to what the caller put there).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numba.core import types
from numba.core.errors import TypingError

from ir_passes import (LIBC_HEAP, TAPE, Activity, forward_mode, fresh_tapes, memory_option, parse_module, print_module,
                       reverse_mode, tests_nan, unpool_checkpoints)

from ..annotations import Const, Duplicated
from ..arguments import copy_same_layout, disjoint, type_key, typeof, zeros_like_layout
from ..bridge.frozen import as_dispatcher
from ..bridge import nrt  # noqa: F401 - Numba's allocators, status codes and dot for ir_passes
from ..bridge.cleanup import cleanup
from ..bridge.codegen import array_data, call_generated, float_slot, raise_status, status_type
from ..bridge.convention import RETPTR, array_extents, returns_float
from ..bridge.entry import make_entry, make_intrinsic
from ..bridge.vector_math import host_library
from . import strong_zero
from .calls import bind, wrapper
from .forward import MAX_WIDTH
from .memory import auto_budget
from .pipeline import build, cached
from .records import Generated, Job, ModeSpec, capture_host


@dataclass(frozen=True)
class HVPSpec:
    argtypes: tuple
    restype: Any
    width: int
    name: str


@dataclass(frozen=True)
class CompiledHVP:
    entry: Any
    spec: HVPSpec
    cleaned: str = ""
    gradient: str = ""      # the reverse-mode gradient after O2: forward mode's input
    generated: str = ""
    library: Any = None     # the Numba code library holding it


def hvp_module(cleaned, fn_name, activity, grad_name, out_name, extents, noalias, width=1,
               memory=TAPE, guarded=False) -> tuple:
    """(the gradient module after O2, the module with the forward mode of the gradient).
    `memory`: the reverse gradient's (docs/checkpointing.md); forward mode then differentiates
    its snapshots and recomputations as any other code (their frames fresh per call).
    `guarded`: every product of the gradient under the strong zero (strong_zero.py)."""
    module = parse_module(cleaned)
    nan_tests = tests_nan(module)     # the primal's: the gradient's own guards read as tests
    reverse_mode(module, fn_name, list(activity), grad_name, noalias=noalias, extents=extents,
                 counts=None, heap=LIBC_HEAP,   # forward mode below knows malloc / realloc / free
                 vector_library=host_library(), memory=memory, guard_products=guarded)
    fresh_tapes(module)
    unpool_checkpoints(module)
    gradient = cleanup(print_module(module, locate_generated=True), grad_name)
    module = parse_module(gradient)
    g = module.functions[grad_name]
    act = list(activity) + [Activity.DUP] * (len(g.params) - len(activity))
    act[len(activity)] = Activity.CONST   # G's first shadow, %retptr's: the seed, a constant
    forward_mode(module, grad_name, act, out_name, width=width, vector_library=host_library(),
                 nan_tests=nan_tests, unread_tangents=(RETPTR,), runtime="declare")
    return gradient, print_module(module)


def compile_hvp(kernel, x, *const, width=1, memory="tape", guarded=False) -> CompiledHVP:
    """Build (or fetch) the Hessian-vector product of kernel(x, *const) for k = `width` vectors;
    `memory` as autodiff's: the reverse gradient it differentiates checkpoints time loops.
    `guarded`: every product of the gradient under the strong zero (strong_zero.py)."""
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
        raise TypeError("hessian_vector_product needs x to be a float array")
    if not 1 <= width <= MAX_WIDTH:
        raise ValueError(f"width must be 1 to {MAX_WIDTH}")
    dispatcher = as_dispatcher(kernel)
    annotated = [Duplicated(x, x)] + [Const(getattr(c, "value", c)) for c in const]
    apart = disjoint(annotated)
    memory = memory_option(memory, auto_budget())
    key = (width, apart, memory, guarded) + tuple(type_key(i, a.value) for i, a in enumerate(annotated))

    def make():
        argtypes = tuple(typeof(i, a.value) for i, a in enumerate(annotated))
        xt = numba.typeof(x)
        kinds = (Activity.DUP,) + (Activity.CONST,) * len(const)
        return build(HVP, Job(dispatcher, argtypes, kinds, (types.float64, xt) + (xt,) * (2 * width),
                              HVPOptions(width, apart, memory, guarded)))
    return cached(HVP, dispatcher, key, make)


# ---- the mode ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class HVPOptions:
    """`width`: products per call; `disjoint`: the arrays of the call are apart; `memory`: the
    reverse gradient's (an ir_passes Memory); `guarded`: every product of the gradient under the
    strong zero (strong_zero.py)."""
    width: int
    disjoint: bool
    memory: Any
    guarded: bool


def _key(job) -> tuple:
    o = job.options
    return (o.width, o.disjoint, o.memory.key) + (("guarded",) if o.guarded else ())


def _symbols(job, cap, activity) -> tuple:
    o = job.options
    tag = hashlib.sha1("|".join([cap.fn_name, ",".join(map(str, cap.argtypes)), str(o.width),
                                 str(o.disjoint), o.memory.key, str(o.guarded)]).encode()).hexdigest()[:20]
    return f"__enzyme_py_hgrad_{tag}", f"__enzyme_py_hvp_{tag}"


def _capture(job):
    cap = capture_host(job)
    if not returns_float(cap.restype):
        raise TypeError(f"hessian_vector_product needs a kernel returning a float, not {cap.restype}")
    return cap


def _transform(job, cap, cleaned, activity, names) -> Generated:
    o = job.options
    gradient, generated = hvp_module(cleaned, cap.fn_name, activity, names[0], names[1],
                                     array_extents(cap.argtypes), o.disjoint, o.width, o.memory,
                                     o.guarded)
    return Generated(generated, extra={"gradient": gradient})


def _spec(job, cap, name) -> HVPSpec:
    return HVPSpec(cap.argtypes, cap.restype, job.options.width, name)


def _param_names(spec):
    k = spec.width
    return ([f"a{i}" for i in range(len(spec.argtypes))] + ["seed", "gx"]
            + [f"v{j}" for j in range(k)] + [f"hv{j}" for j in range(k)])


def _make_call(spec, library):
    rt, k, nargs = spec.restype, spec.width, len(spec.argtypes)
    out_type = status_type(rt)

    def typer(args):
        if tuple(args[:nargs]) != tuple(spec.argtypes):
            raise TypingError(f"this Hessian-vector product was built for "
                              f"({', '.join(map(str, spec.argtypes))}), not "
                              f"({', '.join(map(str, args[:nargs]))})")
        x = spec.argtypes[0]
        for a in args[nargs + 1:]:
            if not isinstance(a, types.Array) or (a.dtype, a.ndim) != (x.dtype, x.ndim):
                raise TypingError(f"gx, v and hv must be arrays like {x}, not {a}")
        return out_type(*args), codegen

    def codegen(context, builder, sig, llargs):
        seed = float_slot(context, builder, rt)
        builder.store(context.cast(builder, llargs[nargs], sig.args[nargs], rt), seed)
        arrays = [array_data(context, builder, t, v)
                  for t, v in zip(sig.args[nargs + 1:], llargs[nargs + 1:])]
        gx, vs, hvs = arrays[0], arrays[1:1 + k], arrays[1 + k:]
        dret = [float_slot(context, builder, rt) for _ in range(k)]    # not read (hvp_module)
        # gradient params (seed slot, gx), then per dup param of the gradient its k shadows:
        # %retptr, x, gx
        extra = [seed, gx] + dret + vs + hvs
        retptr, code, exc = call_generated(context, builder, spec.name, spec.argtypes, rt,
                                           llargs[:nargs], extra, library)
        return context.make_tuple(builder, sig.return_type, [code, exc, builder.load(retptr)])

    return make_intrinsic("hvp_call", _param_names(spec), typer, f"hvp {spec.name}")


def _make_entry(spec, library):
    return make_entry(_make_call(spec, library), _param_names(spec), f"hvp entry {spec.name}",
                      raise_status)


def products(f, x, directions, consts, kwargs, memory="tape", rerun=True) -> tuple:
    """H v for each of `directions` (1 to 16 arrays laid out like x) of a scalar kernel
    f(x, *consts, **kwargs), one call. `rerun=False`: the unguarded function runs once, even
    when a product comes out inf or NaN (enzyme_py/sparse.py seeds NaN on purpose)."""
    target = f
    kw = {k: Const(getattr(a, "value", a)) for k, a in kwargs.items()}
    bound = bind(as_dispatcher(f), tuple([Duplicated(x, zeros_like_layout(x))] +
                                         [Const(c) for c in consts]), kw)
    if not bound.plan.identity:
        # defaults left out or keywords: a wrapper calls f as written, x its first parameter
        target, consts = wrapper(bound.plan), [a.value for a in bound.leaves[1:]]
    c = compile_hvp(target, x, *consts, width=len(directions), memory=memory)
    gx = zeros_like_layout(x)
    hvs = tuple(zeros_like_layout(x) for _ in directions)
    values = [copy_same_layout(x), *consts, 1.0]
    shadows = [gx, *directions, *hvs]
    if not rerun:
        c.entry(*values, *shadows)
        return hvs

    def guarded():     # the variant with every product guarded (strong_zero.py)
        return compile_hvp(target, x, *consts, width=len(directions), memory=memory,
                           guarded=True).entry

    strong_zero.call(as_dispatcher(target), c.entry, guarded, values, shadows, (),
                     derivs_of=lambda r: ())
    return hvs


HVP = ModeSpec("hvp", CompiledHVP, _symbols, _transform, _key, _spec, _make_entry,
               roles=("hgrad", "hvp"), capture=_capture)
