"""Reverse mode on the Numba CPU target: `autodiff(kernel, *args)` (api.py dispatches here).

Each argument is annotated (`Const`, `Active`, `Duplicated`, `DuplicatedNoNeed`; a bare value
means Const). The gradient is built once per (kernel, Numba signature, activity pattern) and
cached; later calls cost one @njit call. The pipeline is docs/internals.md's: capture, cleanup,
ir_passes' reverse mode, verify, Numba's O3, and an @njit entry

    entry(*primal_args, *shadows, seed) -> (derivatives of the Active arguments)

whose @intrinsic declares the gradient function, flattens the primal arguments exactly as
Numba's calling convention does, passes the shadow pointers and derivative slots, and turns the
returned status back into a Numba status so the kernel's exceptions reach the caller unchanged.
"""
from __future__ import annotations

import hashlib
import inspect as _inspect
from dataclasses import dataclass
from functools import partial
from typing import Any, Optional

import numba
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError

from ir_passes import TAPE, Activity, ParallelUpdates, memory_option, parse_module, print_module, reverse_mode

from .. import timings
from ..annotations import Duplicated, DuplicatedNoNeed, as_annotation
from ..arguments import check_aliasing, type_key, typeof, validate
from ..bridge.frozen import as_dispatcher
from ..arguments import disjoint as disjoint_memory
from ..bridge import nrt  # noqa: F401 - Numba's allocators, status codes and dot for ir_passes
from ..bridge.codegen import (check_shadow_type, raise_status, release_return_value,
                              shadow_pointer, type_names)
from ..bridge.convention import arg_layouts, array_extents, data_params, returns_float
from ..bridge.entry import make_entry, make_intrinsic
from ..bridge.link import define_counts
from ..bridge.vector_math import host_library
from . import strong_zero
from .memory import auto_budget, cache_size, memory_bandwidth
from .pipeline import build, cached, clear, compiled, counts, run
from .records import Compiled, Generated, Job, KindPositions, ModeSpec, Prepared
from .value_grad import value_entry

# Attributes of a generated call wrapper's Python function (modes/calls.py): the user's name of
# each of its parameters, and the kernel it calls.
WRAPPER_LABELS = "_enzyme_py_labels"
WRAPPED_KERNEL = "_enzyme_py_kernel"


@dataclass(frozen=True)
class GradientSpec(KindPositions):
    """How to call one generated gradient.

    `argtypes`, `restype`: the kernel's Numba signature. `kinds`: per argument, its Activity
    (strings are converted). `name`: the gradient function's symbol, with the parameters
    documented in docs/internals.md. `dup_positions`, `active_positions`: the argument positions
    of each kind (derived).
    """
    name: str


@dataclass(frozen=True)
class CompiledGradient(Compiled):
    """A compiled gradient and the IR texts that produced it (the fields of records.Compiled).

    `entry` is an @njit function `entry(*primal_args, *shadows, seed)` returning
    a tuple with the derivative of each Active argument, in argument order;
    `shadows` are those of the Duplicated arguments, in argument order. It can
    be called from Python or from other @njit code (with the same Numba types).
    `spec` is a GradientSpec.
    """
    layout: Any = None      # ir_passes' TapeLayout: what the tape holds (see explain)
    library: Any = None     # the Numba code library holding the gradient
    timings: Any = None     # seconds per build stage (enzyme_py/timings.py; ENZYME_PY_TIMINGS=1)

    @property
    def name(self) -> Optional[str]:
        """The gradient function's symbol."""
        return self.spec.name if self.spec else None


def differentiate(text, fn_name, activity, out_name, cache="auto", noalias=False,
                  layouts=None, extents=None, no_need=(), updates=ParallelUpdates.AUTO,
                  memory=TAPE, guarded=False) -> str:
    """Run ir_passes' reverse mode on module `text`; return the new module text.

    `noalias`: the arrays of this call are disjoint. `layouts`, a dict, receives the tape layout.
    `no_need`: parameter indices of DuplicatedNoNeed arrays' data pointers. `memory`: an
    ir_passes Memory (checkpoint/budget.py): the full tape, or time loops checkpointed.
    `guarded`: every adjoint-times-primal product under the strong zero (strong_zero.py)."""
    with timings.stage("parse"):
        module = parse_module(text)
    options = {} if cache == "auto" else {"cache": cache}
    try:
        with timings.stage("AD"):
            g = reverse_mode(module, fn_name, list(activity), out_name, noalias=noalias,
                             counts="declare", extents=extents, no_need=no_need,
                             vector_library=host_library(), parallel=updates, memory=memory,
                             guard_products=guarded, runtime="declare", **options)
        if layouts is not None:
            layouts[out_name] = g.layout
    except TypeError as exc:
        if options and "cache" in str(exc):
            raise ValueError(f"cache={cache!r} is not supported") from exc
        raise
    with timings.stage("print"):
        return print_module(module)


def gradient_name(fn_name: str, argtypes, activity) -> str:
    """A symbol unique to (kernel, signature, activity)."""
    key = "|".join([fn_name, ",".join(map(str, argtypes)), ",".join(activity)])
    return "__enzyme_py_grad_" + hashlib.sha1(key.encode()).hexdigest()[:20]


def compile_count() -> int:
    """How many reverse-mode gradients have been built (cache misses) in this process."""
    return counts["reverse"]


def clear_cache() -> None:
    """Forget every compiled gradient, of every mode (the next call rebuilds)."""
    clear()


def autodiff(kernel, *args, seed=1.0, cache="auto", memory="tape") -> tuple:
    """Reverse mode on the kernel's own arguments: the derivative of each Active argument,
    None elsewhere (api.autodiff binds a call first, modes/bound.py)."""
    return reverse_call(kernel, args, seed, cache, memory=memory)[0]


def reverse_call(kernel, args, seed, cache="auto", with_primal=False,
                 updates=ParallelUpdates.AUTO, memory="tape") -> tuple:
    """Reverse mode on `kernel(*args)` (annotated, the kernel's parameters in order):
    (one entry per argument: the derivative of an Active one, else None; the return value when
    `with_primal` (value_grad.py), else None). `updates`: rules.parallel.ParallelUpdates."""
    return run(REVERSE, kernel, args, (seed, with_primal), cache=cache, updates=updates,
               memory=memory)


def _call(grad, prepared, guarded, seed, with_primal=False) -> tuple:
    """reverse_call's result from the gradient (the mode's `call`); `guarded()` builds the
    variant with every product guarded (strong_zero.py)."""
    annotated = prepared.args
    primal = [a.value for a in annotated]
    shadows = [a.shadow for a in annotated
               if isinstance(a, (Duplicated, DuplicatedNoNeed))]
    value = None
    owner = getattr(prepared.dispatcher.py_func, WRAPPED_KERNEL, prepared.dispatcher)
    written = written_positions(grad, len(primal))
    if with_primal:
        value, derivs = strong_zero.call(owner, value_entry(grad), partial(_value_entry, guarded),
                                         primal, shadows, (float(seed),), _second, written)
    else:
        derivs = strong_zero.call(owner, grad.entry, partial(_entry, guarded), primal, shadows,
                                  (float(seed),), None, written)
    result = [None] * len(annotated)
    for pos, d in zip(grad.spec.active_positions, derivs):
        result[pos] = d
    return tuple(result), value


def _entry(build):
    return build().entry


def _value_entry(build):
    return value_entry(build())


def user_kernel(kernel):
    """The dispatcher of the user's kernel (the one a generated call wrapper calls)."""
    dispatcher = as_dispatcher(kernel)
    return getattr(dispatcher.py_func, WRAPPED_KERNEL, dispatcher)


def written_positions(grad, count):
    """The positions of the `count` arguments whose memory the kernel may write (ir_passes'
    written_params, from the gradient's layout), or None when unknown."""
    written = getattr(grad.layout, "written", None)
    argtypes = grad.spec.argtypes
    if written is None or len(argtypes) != count:
        return None
    return tuple(pos for pos, lay in enumerate(arg_layouts(argtypes))
                 if not written.isdisjoint(lay.params))


def _second(pair):
    return pair[1]


def compile_gradient(kernel, *args, cache="auto", memory="tape", guarded=False) -> CompiledGradient:
    """The (cached or new) gradient for these annotated arguments. `guarded`: the variant with
    every product under the strong zero (strong_zero.py)."""
    return compiled(REVERSE, kernel, args, cache=cache, memory=memory, guarded=guarded)[0]


def inspect(kernel, *args, cache="auto", memory="tape") -> CompiledGradient:
    """compile_gradient, but a failure after capture is returned in `.error` (api.inspect)."""
    return compiled(REVERSE, kernel, args, cache=cache, keep_failure=True, memory=memory)[0]


def prepare(kernel, args, cache, keep_failure=False, updates=ParallelUpdates.AUTO, memory="tape",
            guarded=False):
    """Validate the arguments; return (cached or new CompiledGradient, annotations).
    `memory`: "tape", "auto" or a budget such as "256MB" (docs/checkpointing.md).
    `guarded`: the variant with every product under the strong zero (strong_zero.py)."""
    grad, prepared = compiled(REVERSE, kernel, args, cache=cache, keep_failure=keep_failure,
                              updates=updates, memory=memory, guarded=guarded)
    return grad, prepared.args


def _prepare(kernel, args, cache="auto", keep_failure=False, updates=ParallelUpdates.AUTO,
             memory="tape", guarded=False) -> Prepared:
    """The mode's `prepare` (pipeline.py): the arguments validated, the cache key and the Job."""
    if isinstance(memory, str) and memory == "auto":
        memory = memory_option(memory, auto_budget(), cache_size(), memory_bandwidth())
    memory = memory_option(memory, auto_budget(), cache_size())
    dispatcher = as_dispatcher(kernel)
    annotated = [as_annotation(a) for a in args]
    kinds = tuple([validate(i, a) for i, a in enumerate(annotated)])
    if Activity.DUP in kinds:
        check_aliasing(annotated)
    apart = disjoint_memory(annotated)
    no_need = tuple(i for i, a in enumerate(annotated) if isinstance(a, DuplicatedNoNeed))
    key = (kinds, cache, apart, no_need, updates, memory, guarded) + tuple([type_key(i, a.value)
                                                  for i, a in enumerate(annotated)])

    def job():
        argtypes = tuple(typeof(i, a.value) for i, a in enumerate(annotated))
        shadow_types = tuple(numba.typeof(a.shadow) for a in annotated
                             if isinstance(a, (Duplicated, DuplicatedNoNeed)))
        options = ReverseOptions(cache, apart, no_need, updates, memory, guarded)
        return Job(dispatcher, argtypes, kinds, shadow_types, options, keep_failure)
    return Prepared(dispatcher, key, job, annotated)


def in_python_terms(exc, dispatcher, argtypes):
    """Name the Python argument when ir_passes reports active data stored into constant memory.
    A generated call wrapper (calls.py) names its parameters after the user's arguments, and its
    errors point at the kernel rather than at the wrapper's line."""
    _through_wrapper(exc, dispatcher)
    index = getattr(exc, "param_index", None)
    if index is None:
        return exc
    names = list(_inspect.signature(dispatcher.py_func).parameters)
    labels = getattr(dispatcher.py_func, WRAPPER_LABELS, None)
    for pos, lay in enumerate(arg_layouts(argtypes)):
        if index in lay.params:
            name = names[pos] if pos < len(names) else f"#{pos}"
            where = f"argument {pos} (`{name}`)"
            if labels is not None:
                name = labels[pos] if pos < len(labels) else name
                where = f"argument `{name}`"
            exc.args = (f"active data is stored into {where}, which is Const: "
                        f"constant memory is stored to a differentiable variable"
                        + (f" at {exc.location[0]}:{exc.location[1]}" if exc.location else "")
                        + f"\n  LLVM instruction: {exc.instruction.strip()}"
                        + f"\n  Pass `{name}` as Duplicated({name}, np.zeros_like({name})) so its "
                        f"derivative has a home.",)
            exc.argument = name
            return exc
    return exc


def _through_wrapper(exc, dispatcher):
    """A call wrapper calls the kernel's own compiled code, which has no line information: name
    the kernel's definition instead of the wrapper's line."""
    kernel = getattr(dispatcher.py_func, WRAPPED_KERNEL, None)
    location = getattr(exc, "location", None)
    if kernel is None or not location or "<enzyme_py call" not in str(location[0]):
        return
    code = kernel.py_func.__code__
    old = f"at {location[0]}:{location[1]}"
    exc.location = (code.co_filename, code.co_firstlineno)
    exc.args = tuple(a.replace(old, f"in {kernel.py_func.__qualname__} ({code.co_filename}:"
                                    f"{code.co_firstlineno})") if isinstance(a, str) else a
                     for a in exc.args)


def gradient_for_types(dispatcher, argtypes, shadow_types, kinds, no_need=(),
                       guarded=False, disjoint=False) -> CompiledGradient:
    """The (cached) gradient for Numba argument types, as @njit callers see them: by default
    the variant that assumes nothing about how the arrays overlap; `disjoint`: the one for
    arrays and shadows apart (the caller checks that before calling it).
    `no_need`: positions of the DuplicatedNoNeed arguments. `guarded`: the variant with every
    product under the strong zero (strong_zero.py)."""
    key = ("types", tuple(kinds), tuple(argtypes), tuple(shadow_types), tuple(no_need), guarded) \
        + (("disjoint",) if disjoint else ())
    job = Job(dispatcher, tuple(argtypes), tuple(kinds), tuple(shadow_types),
              ReverseOptions(disjoint=disjoint, no_need=tuple(no_need), guarded=guarded))
    return cached(REVERSE, dispatcher, key, lambda: build(REVERSE, job))


# ---- the mode ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReverseOptions:
    """A reverse-mode build's options. `cache`: "auto", "minimal" or "always". `disjoint`: the
    arrays of the call are apart. `no_need`: positions of the DuplicatedNoNeed arguments (their
    primal result is not needed). `updates`: how parallel loops add into shared shadows
    (rules.parallel.ParallelUpdates). `memory`: an ir_passes Memory (the full tape, or
    checkpointed time loops). `guarded`: every product under the strong zero (strong_zero.py)."""
    cache: str = "auto"
    disjoint: bool = False
    no_need: tuple = ()
    updates: ParallelUpdates = ParallelUpdates.AUTO
    memory: Any = TAPE
    guarded: bool = False


def _key(job) -> tuple:
    o = job.options
    return (job.kinds, o.cache, o.disjoint, o.no_need) + (("guarded",) if o.guarded else ()) + \
        (() if o.updates is ParallelUpdates.AUTO else (o.updates.value,)) + \
        ((str(o.memory), o.memory.key) if o.memory.checkpoints else ())


def _symbols(job, cap, activity) -> tuple:
    o = job.options
    name = gradient_name(cap.fn_name, cap.argtypes, activity)
    if not o.disjoint:
        name += "_alias"
    if o.no_need:
        name += "_noneed" + "_".join(map(str, o.no_need))
    if o.updates is not ParallelUpdates.AUTO:
        name += "_" + o.updates.value
    if o.memory.checkpoints:
        name += f"_ckpt{o.memory.key}"
    if o.guarded:
        name += "_guarded"
    return (name,)


def _transform(job, cap, cleaned, activity, names) -> Generated:
    o, name, layouts = job.options, names[-1], {}
    try:
        text = differentiate(
            cleaned, cap.fn_name, activity, name, o.cache, o.disjoint, layouts,
            array_extents(cap.argtypes), data_params(cap.argtypes, o.no_need),
            **({} if o.updates is ParallelUpdates.AUTO else {"updates": o.updates}),
            **({"memory": o.memory} if o.memory.checkpoints else {}), guarded=o.guarded)
    except Exception as exc:
        raise in_python_terms(exc, job.dispatcher, cap.argtypes) from None
    define_counts(layouts.get(name))
    return Generated(text, layouts.get(name))


def _spec(job, cap, name) -> GradientSpec:
    return GradientSpec(cap.argtypes, cap.restype, job.kinds, name)


# ---- the intrinsic and the entry -------------------------------------------------------------

def param_names(spec: GradientSpec) -> list:
    """Parameter names of the entry and the intrinsic: primal, shadows, seed."""
    return ([f"a{i}" for i in range(len(spec.argtypes))]
            + [f"s{i}" for i in spec.dup_positions] + ["seed"])


def make_gradient_call(spec: GradientSpec):
    """An @intrinsic `f(*primal_args, *shadows, seed)` -> (status, excinfo, derivatives).

    It does not raise: `raise_status(status, excinfo)` does, after the arrays' last use, so
    Numba has released the references the entry holds (an error returned from inside an
    expression would skip those decrefs and leak the arrays' meminfos)."""
    out_type = types.Tuple([types.int32, types.voidptr,
                            types.Tuple([spec.argtypes[i] for i in spec.active_positions])])

    def typer(args):
        nargs = len(spec.argtypes)
        primal, shadows, seed = args[:nargs], args[nargs:-1], args[-1]
        if tuple(primal) != tuple(spec.argtypes):
            raise TypingError(
                f"this enzyme_py gradient was built for argument types "
                f"({type_names(spec.argtypes)}), not ({type_names(primal)}); build one "
                f"for these types with enzyme_py.compile_gradient")
        for i, sty in zip(spec.dup_positions, shadows):
            check_shadow_type(i, spec.argtypes[i], sty)
        if not isinstance(seed, (types.Float, types.Integer)):
            raise TypingError(f"the seed must be a float, not {seed}")
        return out_type(*args), _codegen(spec)

    return make_intrinsic("gradient_call", param_names(spec), typer, f"intrinsic {spec.name}")


def _codegen(spec: GradientSpec):
    def codegen(context, builder, sig, llargs):
        nargs = len(spec.argtypes)
        call_conv = context.call_conv
        primal_fnty = call_conv.get_function_type(spec.restype, list(spec.argtypes))
        retptr = cgutils.alloca_once(builder, primal_fnty.args[0].pointee)
        builder.store(cgutils.get_null_value(retptr.type.pointee), retptr)
        excinfo = cgutils.alloca_once(builder, primal_fnty.args[1].pointee)
        builder.store(cgutils.get_null_value(excinfo.type.pointee), excinfo)
        flat = list(context.get_arg_packer(spec.argtypes).as_arguments(
            builder, llargs[:nargs]))
        shadows = _shadow_pointers(context, builder, spec, sig, llargs, retptr)
        outs = [_zeroed_slot(context, builder, spec.argtypes[i])
                for i in spec.active_positions]
        fnty = ir.FunctionType(ir.IntType(32), list(primal_fnty.args)
                               + [p.type for p in shadows + outs])
        fn = cgutils.get_or_insert_function(builder.module, fnty, spec.name)
        code = builder.call(fn, [retptr, excinfo] + flat + shadows + outs)
        status = call_conv._get_return_status(builder, code, builder.load(excinfo))
        with builder.if_then(builder.not_(status.is_error), likely=True):
            release_return_value(context, builder, spec.restype, retptr)
        # No add_linking_library: the gradient is already loaded in Numba's JIT engine
        # (compile_library finalized it), so the call resolves by symbol. Linking a copy into
        # every caller would optimize and compile the whole gradient again.
        values = [builder.load(out) for out in outs]
        derivs = context.make_tuple(builder, sig.return_type.types[2], values)
        exc = builder.bitcast(builder.load(excinfo), cgutils.voidptr_t)
        return context.make_tuple(builder, sig.return_type, [code, exc, derivs])

    return codegen


def _shadow_pointers(context, builder, spec, sig, llargs, retptr):
    """Shadow pointers in parameter order: the seed slot for %retptr, then arrays."""
    nargs = len(spec.argtypes)
    pointers = []
    if returns_float(spec.restype):
        seed = context.cast(builder, llargs[-1], sig.args[-1], spec.restype)
        slot = cgutils.alloca_once(builder, retptr.type.pointee)
        builder.store(seed, slot)
        pointers.append(slot)
    for k, sty in enumerate(sig.args[nargs:-1]):
        pointers.append(shadow_pointer(context, builder, sty, llargs[nargs + k]))
    return pointers


def _zeroed_slot(context, builder, ty):
    slot = cgutils.alloca_once(builder, context.get_value_type(ty))
    builder.store(context.get_constant(ty, 0), slot)
    return slot


def make_gradient_entry(spec: GradientSpec, library=None):
    """The @njit entry `entry(*primal_args, *shadows, seed)` -> tuple of derivatives.

    The tuple holds one derivative per Active argument, in argument order. The
    shadows must have the strides of their arrays (autodiff checks this; callers
    from @njit code must ensure it). It releases the GIL. The gradient's `library` is not
    linked: it is loaded in Numba's JIT already, and the call resolves by symbol.
    """
    return make_entry(make_gradient_call(spec), param_names(spec), f"entry {spec.name}",
                      raise_status, qualname=f"entry_{spec.name}")


REVERSE = ModeSpec("reverse", CompiledGradient, _symbols, _transform, _key, _spec,
                   make_gradient_entry, roles=("grad",), tail=(numba.float64,),
                   prepare=_prepare, call=_call)
