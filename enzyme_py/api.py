"""The user API: `autodiff`, `compile_gradient`, `inspect`.

`autodiff(kernel, *args)` differentiates a Numba kernel in reverse mode. Each
argument is annotated (`Const`, `Active`, `Duplicated`, `DuplicatedNoNeed`;
a bare value means Const). The gradient is built once per (kernel, Numba
signature, activity pattern) and cached; later calls cost one @njit call.
"""
import threading
import weakref
from dataclasses import dataclass
from types import FunctionType
from typing import Any, Optional

import numba
import numpy as np
from numba.core.dispatcher import Dispatcher

from .annotations import (Active, BatchDuplicated, Const, Duplicated, DuplicatedNoNeed,
                          Forward, Reverse, as_annotation)
from . import timings
from .capture import capture
from .cleanup import cleanup
from .vector_math import host_library
from .convention import array_extents, build_activity, data_params
from . import disk_cache
from .link import (GradientSpec, compile_entry, compile_library, gradient_name, make_entry,
                   prepare_module)


@dataclass(frozen=True)
class CompiledGradient:
    """A compiled gradient and the IR texts that produced it.

    `entry` is an @njit function `entry(*primal_args, *shadows, seed)` returning
    a tuple with the derivative of each Active argument, in argument order;
    `shadows` are those of the Duplicated arguments, in argument order. It can
    be called from Python or from other @njit code (with the same Numba types).

    Texts, for debugging: `captured` (the linked, unoptimized module),
    `cleaned` (after inlining and O2: the input of ir_passes), `generated`
    (ir_passes' output), `verified` (what Numba compiled). `activity` is the
    per-LLVM-parameter list given to ir_passes.

    Only `inspect` returns a failed build: then `error` is the exception,
    `entry` and `spec` are None, and the texts stop at the failing stage.
    """
    entry: Any
    spec: Optional[GradientSpec]
    activity: tuple
    kernel_name: str
    captured: str = ""
    cleaned: str = ""
    generated: str = ""
    verified: str = ""
    error: Optional[BaseException] = None
    layout: Any = None      # ir_passes' TapeLayout: what the tape holds (see explain)
    library: Any = None     # the Numba code library holding the gradient
    timings: Any = None     # seconds per build stage (enzyme_py/timings.py; ENZYME_PY_TIMINGS=1)

    @property
    def name(self) -> Optional[str]:
        """The gradient function's symbol."""
        return self.spec.name if self.spec else None


def differentiate(text, fn_name, activity, out_name, cache="auto", noalias=False,
                  layouts=None, extents=None, no_need=()) -> str:
    """Run ir_passes' reverse mode on module `text`; return the new module text.

    `noalias`: the arrays of this call are disjoint. `layouts`, a dict, receives the tape layout.
    `no_need`: parameter indices of DuplicatedNoNeed arrays' data pointers."""
    from ir_passes import parse_module, print_module, reverse_mode
    from . import nrt  # noqa: F401 - registers Numba's allocators with ir_passes

    with timings.stage("parse"):
        module = parse_module(text)
    options = {} if cache == "auto" else {"cache": cache}
    try:
        with timings.stage("AD"):
            g = reverse_mode(module, fn_name, list(activity), out_name, noalias=noalias,
                             counts="declare", extents=extents, no_need=no_need,
                             vector_library=host_library(), **options)
        if layouts is not None:
            layouts[out_name] = g.layout
    except TypeError as exc:
        if options and "cache" in str(exc):
            raise ValueError(f"cache={cache!r} is not supported") from exc
        raise
    with timings.stage("print"):
        return print_module(module)


_lock = threading.RLock()
_gradients = weakref.WeakKeyDictionary()   # dispatcher -> {key: CompiledGradient}
_jitted = weakref.WeakKeyDictionary()      # plain function -> its njit dispatcher
_stats = {"compiles": 0}


def compile_count() -> int:
    """How many gradients have been built (cache misses) in this process."""
    return _stats["compiles"]


def clear_cache() -> None:
    """Forget every compiled gradient (the next call rebuilds)."""
    with _lock:
        _gradients.clear()


def autodiff(kernel, *args, mode=Reverse, seed=1.0, cache="auto"):
    """Differentiate `kernel(*args)` in reverse mode.

    Returns a tuple with one entry per argument: the derivative (a float) for
    an Active argument, None otherwise. Derivatives of Duplicated arrays are
    added into their shadows. If the kernel returns a float, `seed` multiplies
    its derivative (the adjoint of the return value).

    BatchDuplicated(x, (dx_1, ..., dx_k)) gives k seeds in one call (seed may
    then be a tuple of k); an Active argument's entry is then a tuple of k.

    With mode=Forward (docs/semantics.md): arrays are Duplicated (or
    BatchDuplicated for k directions) with shadows holding the tangents of
    their initial values, scalars Active(x, dx); the shadows leave holding the
    tangents of the final values, and the result is the tangent of the return
    value (a tuple of k for k directions), or None when it returns no float.

    cache (reverse mode): "auto" recomputes cheap values and tapes expensive ones (divisions,
    math calls) inside loops; "minimal" recomputes all it safely can (the smallest tape);
    "always" tapes every value the reverse sweep needs (docs/internals.md).
    """
    if mode is Forward:
        from .forward import forward_autodiff
        return forward_autodiff(kernel, *args)
    if mode is Reverse and any(isinstance(a, BatchDuplicated) for a in args):
        from .batched_reverse import batched_autodiff
        return batched_autodiff(kernel, *args, seed=seed)
    grad, annotated = _prepare(kernel, args, mode, cache)
    primal = [a.value for a in annotated]
    shadows = [a.shadow for a in annotated
               if isinstance(a, (Duplicated, DuplicatedNoNeed))]
    derivs = grad.entry(*primal, *shadows, float(seed))
    result = [None] * len(args)
    for pos, d in zip(grad.spec.active_positions, derivs):
        result[pos] = d
    return tuple(result)


def compile_gradient(kernel, *args, mode=Reverse, cache="auto") -> CompiledGradient:
    """Build (or fetch from the cache) the gradient for these annotated arguments.

    Use `.entry` to call the gradient from @njit code. With mode=Forward it is
    the CompiledForward of enzyme_py.forward; with BatchDuplicated arguments the
    CompiledBatched of enzyme_py.batched_reverse (k seeds per call).
    """
    if mode is Forward:
        from .forward import compile_forward
        return compile_forward(kernel, *args)
    if mode is Reverse and any(isinstance(a, BatchDuplicated) for a in args):
        from .batched_reverse import compile_batched
        return compile_batched(kernel, *args)
    return _prepare(kernel, args, mode, cache)[0]


def inspect(kernel, *args, mode=Reverse, cache="auto") -> CompiledGradient:
    """The CompiledGradient for these arguments, with its IR texts
    (`.captured`, `.cleaned`, `.generated`, `.verified`).

    Unlike `compile_gradient`, a failure after capture (in cleanup, ir_passes
    or compilation) is not raised: it is returned in `.error`, with the texts
    produced before it. Validation and Numba typing errors still raise.
    """
    return _prepare(kernel, args, mode, cache, keep_failure=True)[0]


def _prepare(kernel, args, mode, cache, keep_failure=False):
    """Validate the arguments; return (cached or new CompiledGradient, annotations)."""
    if mode is not Reverse:
        if mode is Forward:
            from .forward import compile_forward
            return compile_forward(kernel, *args, keep_failure=keep_failure), None
        raise ValueError(f"mode must be enzyme_py.Reverse or Forward, not {mode!r}")
    if any(isinstance(a, BatchDuplicated) for a in args):
        raise NotImplementedError(
            "compile_gradient/inspect take Duplicated in reverse mode; BatchDuplicated (k seeds "
            "in one call) goes through autodiff (enzyme_py.batched_reverse)")
    dispatcher = _as_dispatcher(kernel)
    annotated = [as_annotation(a) for a in args]
    kinds = tuple([_validate(i, a) for i, a in enumerate(annotated)])
    if "dup" in kinds:
        _check_aliasing(annotated)
    disjoint = _disjoint(annotated)
    no_need = tuple(i for i, a in enumerate(annotated) if isinstance(a, DuplicatedNoNeed))
    key = (kinds, cache, disjoint, no_need) + tuple([_type_key(i, a.value)
                                                     for i, a in enumerate(annotated)])
    per_kernel = _gradients.get(dispatcher)
    grad = per_kernel.get(key) if per_kernel is not None else None
    if grad is None:
        with _lock:
            per_kernel = _gradients.setdefault(dispatcher, {})
            grad = per_kernel.get(key)
            if grad is None:
                argtypes = tuple(_typeof(i, a.value) for i, a in enumerate(annotated))
                shadow_types = tuple(numba.typeof(a.shadow) for a in annotated
                                     if isinstance(a, (Duplicated, DuplicatedNoNeed)))
                grad = _build(dispatcher, argtypes, shadow_types, kinds, cache, keep_failure,
                              disjoint, no_need)
                if grad.error is None:
                    per_kernel[key] = grad
    return grad, annotated


def _type_key(pos, value):
    """A cheap key that determines `numba.typeof(value)` (typeof of an array is slow)."""
    if type(value) is np.ndarray:
        f = value.flags
        return (value.dtype, value.ndim, f.c_contiguous, f.f_contiguous,
                f.writeable, f.aligned)
    return _typeof(pos, value)


def _typeof(pos, value):
    try:
        return numba.typeof(value)
    except ValueError as exc:
        raise TypeError(f"argument {pos}: Numba cannot type a "
                        f"{type(value).__name__} ({exc})") from None


def _as_dispatcher(kernel):
    if isinstance(kernel, Dispatcher):
        return kernel
    if isinstance(kernel, FunctionType):
        jitted = _jitted.get(kernel)
        if jitted is None:
            with _lock:
                jitted = _jitted.setdefault(kernel, numba.njit(kernel))
        return jitted
    raise TypeError(
        f"autodiff needs a Numba @njit function or a plain Python function, "
        f"not {type(kernel).__name__}")


def in_python_terms(exc, dispatcher, argtypes):
    """Name the Python argument when ir_passes reports active data stored into constant memory."""
    index = getattr(exc, "param_index", None)
    if index is None:
        return exc
    from .convention import arg_layouts
    import inspect as _inspect
    names = list(_inspect.signature(dispatcher.py_func).parameters)
    for pos, layout in enumerate(arg_layouts(argtypes)):
        if index in layout.params:
            name = names[pos] if pos < len(names) else f"#{pos}"
            exc.args = (f"active data is stored into argument {pos} (`{name}`), which is Const: "
                        f"constant memory is stored to a differentiable variable"
                        + (f" at {exc.location[0]}:{exc.location[1]}" if exc.location else "")
                        + f"\n  LLVM instruction: {exc.instruction.strip()}"
                        + f"\n  Pass `{name}` as Duplicated({name}, np.zeros_like({name})) so its "
                        f"derivative has a home.",)
            exc.argument = name
            return exc
    return exc


def define_counts(layout):
    """Define the gradient's iteration-count global once, in a library of its own."""
    if layout is None or not layout.counts_symbol:
        return
    text = (f'@"{layout.counts_symbol}" = global [{len(layout.loops)} x i64] zeroinitializer\n')
    compile_library(text, layout.counts_symbol + ".lib")


def _disjoint(annotated) -> bool:
    """Do the array arguments and the shadows occupy disjoint memory? Then a variant that knows
    it caches less, and tells LLVM (`noalias`)."""
    arrays = [a.value for a in annotated if type(a.value) is np.ndarray]
    arrays += [a.shadow for a in annotated if isinstance(a, (Duplicated, DuplicatedNoNeed))]
    for n, x in enumerate(arrays):
        for y in arrays[n + 1:]:
            if np.may_share_memory(x, y):
                return False
    return True


def gradient_for_types(dispatcher, argtypes, shadow_types, kinds, no_need=()) -> CompiledGradient:
    """The (cached) gradient for Numba argument types, as @njit callers see them: arrays
    may alias, so it is the variant that assumes nothing about their memory.
    `no_need`: positions of the DuplicatedNoNeed arguments."""
    key = ("types", tuple(kinds), tuple(argtypes), tuple(shadow_types), tuple(no_need))
    with _lock:
        per_kernel = _gradients.setdefault(dispatcher, {})
        grad = per_kernel.get(key)
        if grad is None:
            grad = per_kernel[key] = _build(dispatcher, tuple(argtypes), tuple(shadow_types),
                                            tuple(kinds), "auto", False,
                                            no_need=tuple(no_need))
    return grad


@timings.timed_build
def _build(dispatcher, argtypes, shadow_types, kinds, cache, keep_failure,
           disjoint=False, no_need=()) -> CompiledGradient:
    """Run the pipeline of docs/internals.md for one (kernel, signature, activity).
    `shadow_types`: the Numba types of the Duplicated arguments' shadows, in order.
    `no_need`: positions of the DuplicatedNoNeed arguments (their primal result is not needed)."""
    slot = None if keep_failure else disk_cache.open_slot(     # docs/caching.md
        "reverse", dispatcher, tuple(argtypes) + tuple(shadow_types), (kinds, cache, disjoint, no_need),
        make_entry)
    if slot is not None and slot.hit:
        return CompiledGradient(**slot.hit)
    cap = capture(dispatcher, argtypes)
    activity = build_activity(cap.argtypes, cap.restype, kinds)
    texts = {"captured": cap.text}
    try:
        texts["cleaned"] = cleanup(cap.text, cap.fn_name)
        name = gradient_name(cap.fn_name, cap.argtypes, activity)
        if not disjoint:
            name += "_alias"
        if no_need:
            name += "_noneed" + "_".join(map(str, no_need))
        if slot is not None:
            name = slot.symbol(name)
        layouts = {}
        try:
            texts["generated"] = differentiate(
                texts["cleaned"], cap.fn_name, activity, name, cache, disjoint, layouts,
                array_extents(cap.argtypes), data_params(cap.argtypes, no_need))
        except Exception as exc:
            raise in_python_terms(exc, dispatcher, cap.argtypes) from None
        define_counts(layouts.get(name))
        texts["verified"] = prepare_module(texts["generated"], name)
        library = compile_library(texts["verified"], name)
        spec = GradientSpec(cap.argtypes, cap.restype, kinds, name)
        entry = make_entry(spec, library)
        with timings.stage("entry"):
            compile_entry(entry, cap.argtypes + shadow_types + (numba.float64,),
                          cap.argtypes != tuple(argtypes))
    except Exception as exc:
        if not keep_failure:
            raise
        return CompiledGradient(entry=None, spec=None, activity=tuple(activity),
                                kernel_name=cap.fn_name, error=exc, **texts)
    _stats["compiles"] += 1
    fields = dict(entry=entry, spec=spec, activity=tuple(activity), kernel_name=cap.fn_name,
                  layout=layouts.get(name), library=library)
    if slot is not None:
        slot.save(fields, texts["verified"])
    return CompiledGradient(**fields, **texts)


# ---- validation -----------------------------------------------------------

def _validate(pos, ann) -> str:
    """Check one annotated argument; return its kind ("const", "dup", "active")."""
    where = f"argument {pos}"
    if isinstance(ann, Const):
        return "const"
    if isinstance(ann, Active):
        _check_active(where, ann.value)
        return "active"
    _check_duplicated(where, ann.value, ann.shadow)
    return "dup"


def _check_active(where, value):
    if isinstance(value, np.ndarray):
        raise TypeError(
            f"{where}: Active is for float scalars; for an array use "
            f"Duplicated(array, shadow) with a zeroed shadow of the same shape")
    if not isinstance(value, (float, np.floating)):
        raise TypeError(
            f"{where}: Active needs a real float scalar, got "
            f"{type(value).__name__} {value!r}; pass float(x) or mark it Const")
    _check_float_dtype(where, np.asarray(value).dtype, "scalar")


_NUMBA_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _check_float_dtype(where, dtype, what):
    """Numba compiles float32 and float64 only: name the dtype instead of a bare Numba error."""
    if dtype not in _NUMBA_FLOATS:
        raise TypeError(
            f"{where}: a {dtype} {what} cannot be differentiated: Numba compiles float32 and "
            f"float64 only; convert it first (x.astype(np.float64))")


def _check_duplicated(where, value, shadow):
    if not isinstance(value, np.ndarray):
        raise TypeError(
            f"{where}: Duplicated is for float arrays, got "
            f"{type(value).__name__}; use Active(x) for a float scalar")
    if value.dtype.kind != "f":
        raise TypeError(
            f"{where}: only float arrays can be differentiated, got dtype "
            f"{value.dtype}; mark it Const")
    _check_float_dtype(where, value.dtype, "array")
    if not isinstance(shadow, np.ndarray):
        raise TypeError(
            f"{where}: the shadow must be a NumPy array, got "
            f"{type(shadow).__name__}; use np.zeros_like(x)")
    if shadow.dtype.kind != "f":
        raise TypeError(
            f"{where}: the shadow must be a float array, got dtype {shadow.dtype}")
    for what in ("dtype", "shape", "strides"):
        if getattr(value, what) != getattr(shadow, what):
            raise ValueError(
                f"{where}: the shadow's {what} {getattr(shadow, what)} differs "
                f"from the array's {getattr(value, what)}; use np.zeros_like(x)")
    if not shadow.flags.writeable:
        raise ValueError(f"{where}: the shadow is read-only; derivatives are "
                         f"added into it, so it must be writeable")


def _check_aliasing(annotated):
    """Reject shadows that alias primal memory, and one memory with two shadows."""
    dups = [(i, a) for i, a in enumerate(annotated)
            if isinstance(a, (Duplicated, DuplicatedNoNeed))]
    arrays = [(i, a.value) for i, a in enumerate(annotated)
              if isinstance(a.value, np.ndarray)]
    for i, d in dups:
        for j, arr in arrays:
            if np.may_share_memory(d.shadow, arr):
                raise ValueError(
                    f"argument {i}: its shadow shares memory with the array of "
                    f"argument {j}; shadows need memory of their own")
    for n, (i, a) in enumerate(dups):
        for j, b in dups[n + 1:]:
            if np.may_share_memory(a.value, b.value) and not _same_shadow(a, b):
                raise ValueError(
                    f"arguments {i} and {j} are the same (or overlapping) "
                    f"memory but have different shadows; pass the same shadow")


def _same_shadow(a, b) -> bool:
    """Whether overlapping primals a, b have shadows laid out like them."""
    offset = b.value.ctypes.data - a.value.ctypes.data
    return (b.shadow.ctypes.data - a.shadow.ctypes.data == offset
            and np.may_share_memory(a.shadow, b.shadow))
