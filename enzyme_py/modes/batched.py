"""Batched reverse mode: k seeds in one call, sharing the forward sweep.

The reverse-mode gradient G (docs/internals.md) is linear in its seeds: the shadows it reads
and the derivative slots it adds to. So the k gradients for k seeds are the k tangents of G, run
with zero seeds, in the directions of the k seeds: forward mode over G with its shadow and
derivative pointers duplicated (width k) and everything else constant. The primal work (G's
forward sweep, its tape) runs once; the adjoint sweep runs for the k lanes side by side. Reverse
mode's strong-zero guards (`select (d == 0), 0, d * partial`) are differentiated lane by lane
(ir_passes forward_mode's `strong_zero_guards`), so each lane is what a separate call gives.

    entry(*args, *scratch, *shadow_lanes, *seeds) -> per Active argument, its k derivatives

`scratch`: per Duplicated argument, a zeroed array laid out like it (the zero seeds' shadow);
`shadow_lanes`: per Duplicated argument its k shadows; `seeds`: k floats (the return value's).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numba
import numpy as np
from numba.core import types

from ir_passes import (LIBC_HEAP, Activity, ConstantMemoryError, forward_mode, fresh_tapes, parse_module,
                       print_module, reverse_mode, tests_nan)

from ..annotations import Active, BatchDuplicated, Const, Duplicated, DuplicatedNoNeed, as_annotation
from ..arguments import (argument_arrays, check_active, check_aliasing_lanes, check_duplicated,
                         disjoint, distinct_memory, type_key, typeof, zeros_like_layout)
from ..bridge.frozen import as_dispatcher
from ..bridge import nrt  # noqa: F401 - Numba's allocators, status codes and dot for ir_passes
from ..bridge.cleanup import cleanup
from ..bridge.codegen import array_data, call_generated, float_slot, raise_status, status_type
from ..bridge.convention import array_extents, returns_float
from ..bridge.entry import make_entry, make_intrinsic
from ..bridge.vector_math import host_library
from .forward import MAX_WIDTH
from .pipeline import compiled, run
from .records import Generated, Job, ModeSpec, Prepared
from . import strong_zero


@dataclass(frozen=True)
class BatchedSpec:
    argtypes: tuple
    restype: Any
    kinds: tuple
    width: int
    name: str

    @property
    def dup_positions(self):
        return tuple(i for i, k in enumerate(self.kinds) if k is Activity.DUP)

    @property
    def active_positions(self):
        return tuple(i for i, k in enumerate(self.kinds) if k is Activity.ACTIVE)


@dataclass(frozen=True)
class CompiledBatched:
    entry: Any
    spec: BatchedSpec
    gradient: str = ""
    generated: str = ""
    library: Any = None
    written: Any = None     # the primal's LLVM parameters the kernel may write (None: unknown)


def batched_module(cleaned, fn_name, activity, grad_name, out_name, extents, noalias, width,
                   float_ret=False, guarded=False) -> tuple:
    """(the gradient after O2, the module with forward mode over the gradient's seeds, the
    primal's LLVM parameters the kernel may write).

    %retptr is duplicated too when the kernel returns a float: the analysis may call the
    primal return value varying (its tangents are zero), and its shadows are just k slots.
    `guarded`: every product of the gradient under the strong zero (strong_zero.py)."""
    module = parse_module(cleaned)
    nan_tests = tests_nan(module)     # the primal's: the gradient's own guards read as tests
    reverse = reverse_mode(module, fn_name, list(activity), grad_name, noalias=noalias,
                           extents=extents, counts=None,
                           heap=LIBC_HEAP,   # forward mode below knows malloc / realloc / free
                           vector_library=host_library(), guard_products=guarded)
    fresh_tapes(module)
    gradient = cleanup(print_module(module), grad_name)
    module = parse_module(gradient)
    g = module.functions[grad_name]
    act = [Activity.CONST] * len(activity) + [Activity.DUP] * (len(g.params) - len(activity))
    if float_ret:
        act[0] = Activity.DUP
    forward_mode(module, grad_name, act, out_name, width=width, strong_zero_guards=True,
                 nan_tests=nan_tests, noalias_shadows=noalias, vector_library=host_library(),
                 runtime="declare")
    return gradient, print_module(module), getattr(reverse.layout, "written", None)


def split_batched_args(args, seed):
    """-> (annotations, kinds, width, shadow lanes per dup arg, seeds)."""
    annotated = [as_annotation(a) for a in args]
    width = None
    kinds, lanes = [], []
    for pos, a in enumerate(annotated):
        where = f"argument {pos}"
        if isinstance(a, Const):
            kinds.append(Activity.CONST)
        elif isinstance(a, Active):
            check_active(where, a.value)
            kinds.append(Activity.ACTIVE)
        else:
            ls = tuple(a.shadows) if isinstance(a, BatchDuplicated) else None
            if ls is None:
                raise ValueError(f"{where}: with BatchDuplicated arguments every differentiated "
                                 f"array needs k shadows: use BatchDuplicated here too")
            if width is not None and len(ls) != width:
                raise ValueError(f"{where}: {len(ls)} seeds, but another argument has {width}")
            width = len(ls)
            for s in ls:
                check_duplicated(where, a.value, s)
            lanes.append(ls)
            kinds.append(Activity.DUP)
    if width is None or not 1 <= width <= MAX_WIDTH:
        raise ValueError(f"batched reverse mode takes 1 to {MAX_WIDTH} seeds per array")
    seeds = tuple(seed) if isinstance(seed, (tuple, list)) else (seed,) * width
    if len(seeds) != width:
        raise ValueError(f"seed: {len(seeds)} seeds for {width} directions")
    check_aliasing_lanes(annotated, lanes)
    for a, ls in zip([a for a in annotated if isinstance(a, (BatchDuplicated, Duplicated,
                                                            DuplicatedNoNeed))], lanes):
        for n, s in enumerate(ls):
            for t in ls[n + 1:]:
                if np.may_share_memory(s, t):
                    raise ValueError("two seeds of one argument share memory; each needs its own")
    return annotated, tuple(kinds), width, lanes, tuple(float(s) for s in seeds)


def lanes_apart(annotated, lanes) -> bool:
    """Seeds share memory with no array and no other seed (then shadows are `noalias`)."""
    arrays = argument_arrays(annotated)
    return arrays is not None and distinct_memory(arrays + [s for ls in lanes for s in ls])


def compile_batched(kernel, *args, guarded=False):
    """The CompiledBatched for these annotations (BatchDuplicated with k shadows, Active, Const):
    `.entry` is an @njit function, callable from @njit code, with the signature in this module's
    docstring. `compile_gradient` returns it when an argument is BatchDuplicated. `guarded`:
    the variant with every product under the strong zero (strong_zero.py)."""
    return compiled(BATCHED, kernel, args, guarded=guarded)[0]


def autodiff(kernel, *args, seed=1.0) -> tuple:
    """Reverse mode with BatchDuplicated: k seeds per array in one call. Shadows accumulate lane
    by lane; the result has, per Active argument, a tuple of its k derivatives."""
    return run(BATCHED, kernel, args, seed=seed)


def _prepare(kernel, args, seed=1.0, guarded=False) -> Prepared:
    """The mode's `prepare` (pipeline.py); `args`: (annotations, kinds, lanes, seeds)."""
    dispatcher = as_dispatcher(kernel)
    annotated, kinds, width, lanes, seeds = split_batched_args(args, seed)
    apart = disjoint(annotated) and lanes_apart(annotated, lanes)
    key = (kinds, width, apart, guarded) + tuple(type_key(i, a.value) for i, a in enumerate(annotated))

    def job():
        argtypes = tuple(typeof(i, a.value) for i, a in enumerate(annotated))
        dup_types = [numba.typeof(a.value) for a, k in zip(annotated, kinds) if k is Activity.DUP]
        entry_types = (tuple(dup_types) + tuple(numba.typeof(s) for ls in lanes for s in ls)
                       + (types.float64,) * width)
        return Job(dispatcher, argtypes, kinds, entry_types, BatchedOptions(width, apart, guarded))
    return Prepared(dispatcher, key, job, (annotated, kinds, lanes, seeds))


def _fallback(job, exc):
    """The disjoint gradient restores overwritten primal memory (a scratch array) from its tape
    in the reverse sweep, and forward mode over it takes the tape's loads for active data stored
    into the primal arguments, which it holds Const. The variant for aliased memory is correct
    for disjoint memory too: build it instead."""
    if isinstance(exc, ConstantMemoryError) and job.options.disjoint:
        return replace(job, options=replace(job.options, disjoint=False))
    return None


def _call(c, prepared, guarded) -> tuple:
    """autodiff's result from the compiled entry (the mode's `call`)."""
    annotated, kinds, lanes, seeds = prepared.args
    values = [a.value for a in annotated]
    scratch = [zeros_like_layout(a.value) for a, k in zip(annotated, kinds) if k is Activity.DUP]
    derivs = strong_zero.call(prepared.dispatcher, c.entry, partial(_entry, guarded), values,
                              scratch + [s for ls in lanes for s in ls], seeds)
    out = [None] * len(annotated)
    for pos, d in zip(c.spec.active_positions, derivs):
        out[pos] = tuple(d)
    return tuple(out)


def _entry(build):
    return build().entry


# ---- the mode ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class BatchedOptions:
    """`width`: seeds per call. `disjoint`: the arrays and seeds of the call are apart.
    `guarded`: every product of the gradient under the strong zero (strong_zero.py)."""
    width: int
    disjoint: bool
    guarded: bool


def _key(job) -> tuple:
    o = job.options
    return (job.kinds, o.width, o.disjoint) + (("guarded",) if o.guarded else ())


def _symbols(job, cap, activity) -> tuple:
    o = job.options
    tag = hashlib.sha1("|".join([cap.fn_name, ",".join(map(str, cap.argtypes)), ",".join(job.kinds),
                                 str(o.width), str(o.disjoint), str(o.guarded)]).encode()).hexdigest()[:20]
    return f"__enzyme_py_bgrad_{tag}", f"__enzyme_py_batched_{tag}"


def _transform(job, cap, cleaned, activity, names) -> Generated:
    o = job.options
    gradient, generated, written = batched_module(
        cleaned, cap.fn_name, activity, names[0], names[1], array_extents(cap.argtypes),
        o.disjoint, o.width, returns_float(cap.restype), o.guarded)
    return Generated(generated, extra={"gradient": gradient, "written": written})


def _spec(job, cap, name) -> BatchedSpec:
    return BatchedSpec(cap.argtypes, cap.restype, job.kinds, job.options.width, name)


def _param_names(spec):
    k = spec.width
    return ([f"a{i}" for i in range(len(spec.argtypes))] + [f"z{i}" for i in spec.dup_positions]
            + [f"s{i}_{j}" for i in spec.dup_positions for j in range(k)]
            + [f"seed{j}" for j in range(k)])


def _make_call(spec, library):
    k, nargs, ndup = spec.width, len(spec.argtypes), len(spec.dup_positions)
    derivs = types.Tuple([types.UniTuple(spec.argtypes[i], k) for i in spec.active_positions])

    def typer(args):
        return status_type(derivs)(*args), codegen

    def codegen(context, builder, sig, llargs):
        rt = spec.restype
        arrays = [array_data(context, builder, t, v)
                  for t, v in zip(sig.args[nargs:nargs + ndup * (1 + k)], llargs[nargs:nargs + ndup * (1 + k)])]
        scratch, lanes = arrays[:ndup], arrays[ndup:]
        seeds = llargs[nargs + ndup * (1 + k):]
        seed_types = sig.args[nargs + ndup * (1 + k):]
        primal, tangent = [], []
        ret_lanes = [float_slot(context, builder, rt) for _ in range(k)] if returns_float(rt) else []
        if returns_float(rt):
            primal.append(float_slot(context, builder, rt))
            for v, t in zip(seeds, seed_types):
                slot = float_slot(context, builder, rt)
                builder.store(context.cast(builder, v, t, rt), slot)
                tangent.append(slot)
        primal += scratch
        tangent += lanes
        outs = []
        for i in spec.active_positions:
            primal.append(float_slot(context, builder, spec.argtypes[i]))
            slots = [float_slot(context, builder, spec.argtypes[i]) for _ in range(k)]
            tangent += slots
            outs.append(slots)
        # forward mode's parameters: the gradient's (shadows, derivative slots), then k lanes per
        # duplicated one: %retptr (discarded), the seed slot, the arrays' shadows, the slots
        _, code, exc = call_generated(context, builder, spec.name, spec.argtypes, rt, llargs[:nargs],
                                      primal + ret_lanes + tangent, library)
        values = [context.make_tuple(builder, types.UniTuple(spec.argtypes[i], k),
                                     [builder.load(s) for s in slots])
                  for i, slots in zip(spec.active_positions, outs)]
        result = context.make_tuple(builder, derivs, values)
        return context.make_tuple(builder, sig.return_type, [code, exc, result])

    return make_intrinsic("batched_call", _param_names(spec), typer, f"batched reverse {spec.name}")


def _make_entry(spec, library):
    return make_entry(_make_call(spec, library), _param_names(spec),
                      f"batched reverse entry {spec.name}", raise_status)


BATCHED = ModeSpec("batched", CompiledBatched, _symbols, _transform, _key, _spec, _make_entry,
                   roles=("bgrad", "batched"), prepare=_prepare, call=_call, fallback=_fallback)
