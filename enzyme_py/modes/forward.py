"""Forward mode in the Numba bridge: `autodiff(kernel, *args, mode=Forward)`.

The pipeline is reverse mode's (docs/internals.md) with `ir_passes.forward_mode` in place of
`reverse_mode`: capture, cleanup, forward mode, verify, Numba's O3, and an `@njit` entry

    entry(*primal_args, *shadows, *tangents) -> (value, (t_0, ..., t_{k-1}))

`shadows` are, per Duplicated argument in argument order, its k shadow arrays; `tangents`, per
Active argument, its k tangents; `value` is the kernel's float return value (0.0 when it returns
no float) and `t_j` the tangent of the return value in direction j. The entry can be called from
@njit code. Shadows enter holding the tangents of the arrays' initial contents and leave holding
the tangents of their final contents (docs/semantics.md).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Union

import numba
import numpy as np
from numba.core import types
from numba.core.errors import TypingError

from ir_passes import Activity, forward_mode, parse_module, pattern_text, print_module

from ..annotations import Active, BatchDuplicated, Const, DuplicatedNoNeed, as_annotation
from ..arguments import (argument_arrays, check_active, check_aliasing_lanes, check_distinct_lanes,
                         check_duplicated, distinct_memory, memory_of, type_key, typeof)
from ..bridge.frozen import as_dispatcher
from ..bridge import nrt  # noqa: F401 - Numba's allocators, status codes and dot for ir_passes
from ..bridge.memo import captured, cleaned_text
from ..bridge.codegen import (call_generated, check_shadow_type, float_slot, raise_status,
                              release_return_value, shadow_pointer, status_type, type_names)
from ..bridge.convention import array_extents, build_activity, data_params, returns_float
from ..bridge.entry import make_entry, make_intrinsic
from ..bridge.vector_math import host_library
from .pipeline import build, cached, compiled
from .records import Compiled, Generated, Job, KindPositions, ModeSpec, Prepared, activity_host, clean_host

MAX_WIDTH = 16


@dataclass(frozen=True)
class ForwardSpec(KindPositions):
    """How to call one generated tangent function (see the module docstring)."""
    width: int
    name: str

    @property
    def value_type(self):
        return self.restype if returns_float(self.restype) else types.float64


@dataclass(frozen=True)
class CompiledForward(Compiled):
    """A compiled tangent function: `entry` (see the module docstring), its ForwardSpec and IR
    texts (the fields of records.Compiled)."""
    library: Any = None

    @property
    def width(self) -> int:
        return self.spec.width if self.spec else 0


def forward_differentiate(text, fn_name, activity, out_name, width=1, noalias=False,
                          extents=None, no_need=(), guarded=False) -> str:
    """Run ir_passes' forward mode on module `text`; return the new module text.

    noalias: every array and shadow of the call is memory of its own (shadows get `noalias`).
    extents: convention.array_extents of the argument types (stand-in shadows for Const arrays).
    no_need: parameter indices of DuplicatedNoNeed arrays' data pointers.
    guarded: every tangent-times-primal product under the strong zero (strong_zero.py)."""
    module = parse_module(text)
    forward_mode(module, fn_name, list(activity), out_name, width=width, noalias_shadows=noalias,
                 extents=extents, no_need=no_need, vector_library=host_library(),
                 nan_tests=True if guarded else None, runtime="declare")
    return print_module(module)


def forward_name(fn_name, argtypes, activity, width) -> str:
    key = "|".join([fn_name, ",".join(map(str, argtypes)), ",".join(activity), str(width)])
    return "__enzyme_py_fwd_" + hashlib.sha1(key.encode()).hexdigest()[:20]


# ---- annotations -----------------------------------------------------------------------------

def split_forward_args(args):
    """Annotated arguments -> (annotations, kinds, width, shadows, tangents), validated.

    `shadows` is the flat list of shadow arrays (per Duplicated argument, its k shadows) and
    `tangents` the flat list of tangents (per Active argument, its k tangents)."""
    annotated = [as_annotation(a) for a in args]
    width = None

    def agree(k, where):
        nonlocal width
        if width is None:
            width = k
        elif width != k:
            raise ValueError(f"{where}: {k} directions, but another argument has {width}; every "
                             f"differentiated argument needs the same number of directions")

    kinds, shadows, tangents = [], [], []
    for pos, a in enumerate(annotated):
        where = f"argument {pos}"
        if isinstance(a, Const):
            kinds.append(Activity.CONST)
        elif isinstance(a, Active):
            check_active_forward(where, a)
            t = a.tangent if isinstance(a.tangent, (tuple, list)) else (a.tangent,)
            agree(len(t), where)
            for v in t:
                if not isinstance(v, (float, int, np.floating, np.integer)) or isinstance(v, bool):
                    raise TypeError(f"{where}: a tangent must be a float, got {type(v).__name__}")
            tangents.append([float(v) for v in t])
            kinds.append(Activity.ACTIVE)
        else:
            lanes = tuple(a.shadows) if isinstance(a, BatchDuplicated) else (a.shadow,)
            if isinstance(a, BatchDuplicated) and not 1 <= len(lanes) <= MAX_WIDTH:
                raise ValueError(f"{where}: BatchDuplicated takes 1 to {MAX_WIDTH} shadows, got {len(lanes)}")
            agree(len(lanes), where)
            for s in lanes:
                check_duplicated(where, a.value, s)
            check_distinct_lanes(where, lanes)
            shadows.append(list(lanes))
            kinds.append(Activity.DUP)
    width = width or 1
    return annotated, tuple(kinds), width, shadows, tangents


def check_active_forward(where, a):
    """An Active scalar of forward mode carries its tangent(s)."""
    check_active(where, a.value)
    if a.tangent is None:
        raise TypeError(f"{where}: in forward mode an Active scalar needs its tangent: Active(x, dx) "
                        f"(or Active(x, (dx_1, ..., dx_k)) for k directions); Const(x) for none")
    if isinstance(a.tangent, (tuple, list)) and not 1 <= len(a.tangent) <= MAX_WIDTH:
        raise ValueError(f"{where}: 1 to {MAX_WIDTH} tangents, got {len(a.tangent)}")


# ---- building and caching --------------------------------------------------------------------

def compile_forward(kernel, *args, keep_failure=False, guarded=False) -> CompiledForward:
    """Build (or fetch from the cache) the tangent function for these annotated arguments.
    `guarded`: the variant with every product under the strong zero."""
    return compiled(FORWARD, kernel, args, keep_failure=keep_failure, guarded=guarded)[0]


def prepare(kernel, args, keep_failure=False, guarded=False):
    """Validate the arguments; return (cached or new CompiledForward, annotations, shadows,
    tangents). `guarded`: the variant with every product under the strong zero."""
    fwd, prepared = compiled(FORWARD, kernel, args, keep_failure=keep_failure, guarded=guarded)
    return (fwd,) + prepared.args


def _prepare(kernel, args, keep_failure=False, guarded=False) -> Prepared:
    """The mode's `prepare` (pipeline.py); `args`: (annotations, shadows, tangents)."""
    dispatcher = as_dispatcher(kernel)
    annotated, kinds, width, shadows, tangents = split_forward_args(args)
    if Activity.DUP in kinds:
        check_aliasing_lanes(annotated, shadows)
    disjoint = all_disjoint(annotated, shadows)
    no_need = tuple(i for i, a in enumerate(annotated) if isinstance(a, DuplicatedNoNeed))
    key = (kinds, width, disjoint, no_need, guarded) + tuple(type_key(i, a.value)
                                                    for i, a in enumerate(annotated))

    def job():
        argtypes = tuple(typeof(i, a.value) for i, a in enumerate(annotated))
        shadow_types = tuple(numba.typeof(s) for lanes in shadows for s in lanes)
        return _job(dispatcher, argtypes, shadow_types, kinds,
                    ForwardOptions(width, disjoint, no_need, guarded), keep_failure)
    return Prepared(dispatcher, key, job, (annotated, shadows, tangents))


def all_disjoint(annotated, shadows) -> bool:
    """Are all arrays and shadows of this call distinct memory? Then the variant whose shadows
    are `noalias` is used (LLVM keeps tangents in registers across stores)."""
    arrays = argument_arrays(annotated)
    return arrays is not None and distinct_memory(
        arrays + [x for lanes in shadows for s in lanes for x in memory_of(s)])


def forward_for_types(dispatcher, argtypes, shadow_types, kinds, width=1,
                      guarded=False) -> CompiledForward:
    """The (cached) tangent function for Numba argument types, as @njit callers see them: the
    variant that assumes nothing about how arrays and shadows overlap. `guarded`: every product
    under the strong zero (strong_zero.py)."""
    key = ("types", tuple(kinds), width, tuple(argtypes), tuple(shadow_types), guarded)
    job = _job(dispatcher, tuple(argtypes), tuple(shadow_types), tuple(kinds),
               ForwardOptions(width, guarded=guarded))
    return cached(FORWARD, dispatcher, key, lambda: build(FORWARD, job))


def primal_ir(kernel, *args) -> tuple:
    """(cleaned IR text, function name, activity per LLVM parameter) of the code forward mode
    differentiates for these annotated arguments (enzyme_py/sparse.py asks ir_passes which of
    its decisions depend on the differentiated values)."""
    annotated, kinds = split_forward_args(args)[:2]
    argtypes = tuple(typeof(i, a.value) for i, a in enumerate(annotated))
    cap = captured(as_dispatcher(kernel), argtypes)
    return cleaned_text(cap), cap.fn_name, build_activity(cap.argtypes, cap.restype, kinds)


# ---- the mode ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ForwardOptions:
    """A forward-mode build's options. `width`: directions per call. `disjoint`: every array and
    shadow of the call is memory of its own. `no_need`: positions of the DuplicatedNoNeed
    arguments. `guarded`: every product under the strong zero (strong_zero.py); "pattern":
    that, with both arms of each decision on the inputs' values run (ir_passes
    transforms/pattern_union.py, for enzyme_py/sparse.py's NaN runs)."""
    width: int = 1
    disjoint: bool = False
    no_need: tuple = ()
    guarded: Union[bool, str] = False


def _job(dispatcher, argtypes, shadow_types, kinds, options, keep_failure=False) -> Job:
    """`shadow_types`: the Numba types of the shadows, flat (per Duplicated argument, its k);
    the entry then takes a float tangent per Active argument and direction."""
    tangent_types = (types.float64,) * (kinds.count(Activity.ACTIVE) * options.width)
    return Job(dispatcher, argtypes, kinds, tuple(shadow_types) + tangent_types, options,
               keep_failure)


def _key(job) -> tuple:
    o = job.options
    return (job.kinds, o.width, o.disjoint, o.no_need) + \
        (("guarded" if o.guarded is True else o.guarded,) if o.guarded else ())


def _symbols(job, cap, activity) -> tuple:
    o = job.options
    name = forward_name(cap.fn_name, cap.argtypes, activity, o.width) + ("" if o.disjoint else "_alias")
    if o.no_need:
        name += "_noneed" + "_".join(map(str, o.no_need))
    if o.guarded:
        name += "_guarded" if o.guarded is True else "_" + o.guarded
    return (name,)


def _clean(job, cap) -> str:
    """The CPU cleanup; for the "pattern" variant, both arms of each decision run."""
    text = clean_host(job, cap)
    if job.options.guarded == "pattern":
        text = pattern_text(text, cap.fn_name, activity_host(job, cap))
    return text


def _transform(job, cap, cleaned, activity, names) -> Generated:
    o = job.options
    return Generated(forward_differentiate(cleaned, cap.fn_name, activity, names[-1], o.width,
                                           o.disjoint, array_extents(cap.argtypes),
                                           data_params(cap.argtypes, o.no_need), o.guarded))


def _spec(job, cap, name) -> ForwardSpec:
    return ForwardSpec(cap.argtypes, cap.restype, job.kinds, job.options.width, name)


# ---- the intrinsic and the entry -------------------------------------------------------------

def param_names(spec: ForwardSpec) -> list:
    w = spec.width
    return ([f"a{i}" for i in range(len(spec.argtypes))]
            + [f"s{i}_{j}" for i in spec.dup_positions for j in range(w)]
            + [f"t{i}_{j}" for i in spec.active_positions for j in range(w)])


def make_forward_call(spec: ForwardSpec, library, keep_value=False):
    """An @intrinsic `f(*primal_args, *shadows, *tangents)` -> (value, (t_0, ..., t_{k-1})).
    `keep_value`: the value is the kernel's return value whatever its type (the caller owns
    it), not 0.0 for a return value that is no float."""
    vt = spec.value_type
    rt = spec.restype if keep_value else vt
    out_type = status_type(types.Tuple([rt, types.UniTuple(vt, spec.width)]))
    nargs, nshadows = len(spec.argtypes), len(spec.dup_positions) * spec.width

    def typer(args):
        primal, shadows, tangents = args[:nargs], args[nargs:nargs + nshadows], args[nargs + nshadows:]
        if tuple(primal) != tuple(spec.argtypes):
            raise TypingError(
                f"this enzyme_py tangent function was built for argument types "
                f"({type_names(spec.argtypes)}), not ({type_names(primal)}); build one for these types "
                f"with enzyme_py.forward_entry")
        lanes = [i for i in spec.dup_positions for _ in range(spec.width)]
        for i, sty in zip(lanes, shadows):
            check_shadow_type(i, spec.argtypes[i], sty)
        for t in tangents:
            if not isinstance(t, (types.Float, types.Integer)):
                raise TypingError(f"a tangent must be a float, not {t}")
        return out_type(*args), _codegen(spec, library, keep_value)

    return make_intrinsic("forward_call", param_names(spec), typer, f"intrinsic {spec.name}")


def _codegen(spec: ForwardSpec, library, keep_value=False):
    def codegen(context, builder, sig, llargs):
        nargs, w = len(spec.argtypes), spec.width
        nshadows = len(spec.dup_positions) * w
        vt = spec.value_type
        slots = [float_slot(context, builder, vt) for _ in range(w)] if returns_float(spec.restype) else []
        pointers = slots + [shadow_pointer(context, builder, sty, llargs[nargs + k])
                            for k, sty in enumerate(sig.args[nargs:nargs + nshadows])]
        lanes = [i for i in spec.active_positions for _ in range(w)]
        values = [context.cast(builder, v, sty, spec.argtypes[i])
                  for i, v, sty in zip(lanes, llargs[nargs + nshadows:], sig.args[nargs + nshadows:])]
        retptr, code, exc = call_generated(context, builder, spec.name, spec.argtypes, spec.restype,
                                           llargs[:nargs], pointers + values, library)
        if returns_float(spec.restype):
            value = builder.load(retptr)
            ts = [builder.load(s) for s in slots]
        elif keep_value:      # the return value's reference passes to the caller
            value = context.get_returned_value(builder, spec.restype, builder.load(retptr))
            ts = [context.get_constant(vt, 0.0)] * w
        else:
            ok = builder.icmp_signed("==", code, code.type(0))
            with builder.if_then(ok, likely=True):
                release_return_value(context, builder, spec.restype, retptr)
            value = context.get_constant(vt, 0.0)
            ts = [context.get_constant(vt, 0.0)] * w
        tup = context.make_tuple(builder, types.UniTuple(vt, w), ts)
        result = context.make_tuple(builder, sig.return_type.types[2], [value, tup])
        return context.make_tuple(builder, sig.return_type, [code, exc, result])

    return codegen


def make_forward_entry(spec: ForwardSpec, library):
    """The @njit entry (see the module docstring); it releases the GIL."""
    return make_entry(make_forward_call(spec, library), param_names(spec),
                      f"forward entry {spec.name}", raise_status)


FORWARD = ModeSpec("forward", CompiledForward, _symbols, _transform, _key, _spec,
                   make_forward_entry, roles=("fwd",), clean=_clean, prepare=_prepare)
