"""Split reverse mode (Enzyme.jl's ReverseSplitWithPrimal): the forward sweep once, the reverse
sweep later, from a tape, as often as wanted.

    value, tape = augmented_forward(kernel, Duplicated(x, dx), Duplicated(y, dy), Active(a))
    derivs = reverse(tape, seed=1.0)     # the tuple autodiff returns; shadows as autodiff leaves

ir_passes builds the gradient as three functions (transforms/reverse/calls/public_split.py): `.aug`
runs the kernel and fills the tape, `.rev` runs the reverse sweep from it without changing it,
`.free` releases it. The reverse sweep reads no primal memory (every value it needs is on the
tape), so the caller may change the primal arrays after the forward call. It reads and writes
the shadow arrays given to `augmented_forward`: put the seeds there (and zeros where a plain
gradient is wanted) before each `reverse`.
"""
from __future__ import annotations

import ctypes
import inspect as _inspect
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types

from ir_passes import Activity, parse_module, print_module, reverse_mode

from ..annotations import Duplicated, DuplicatedNoNeed, as_annotation
from ..arguments import check_aliasing, type_key, typeof, validate
from ..bridge import nrt  # noqa: F401 - Numba's allocators and status codes for ir_passes
from ..bridge.codegen import array_data, float_slot, raise_status, status_type
from ..bridge.convention import arg_layouts, array_extents, returns_float
from ..bridge.entry import make_entry, make_intrinsic
from ..bridge.frozen import as_dispatcher
from ..bridge.vector_math import host_library

from .frame_pool import FramePool, frame_bytes
from .pipeline import build, builds, cached
from .records import Generated, Job, ModeSpec, capture_host
from .reverse import GradientSpec, gradient_name

class SplitEntries(NamedTuple):
    """The @njit entries of a split gradient: `aug(*args, *shadows, cell) -> value` (the
    forward sweep into the frame in cell[0], 0: a new one, left there; a failed call frees it
    and leaves 0), `rev(*args, *shadows, seed, frame) -> derivatives`, `reset(frame)`,
    `drop(frame)`."""
    aug: Any
    rev: Any
    reset: Any
    drop: Any


@dataclass(frozen=True)
class CompiledSplit:
    """A split gradient: its `entry` (SplitEntries, also as `aug`, `rev`, `reset`, `drop`);
    `pool` keeps the frames of freed tapes (frame_pool.py); `layout` is ir_passes' TapeLayout
    (its `frame_bytes` and `held` give a tape's size)."""
    spec: GradientSpec
    entry: SplitEntries
    layout: Any
    library: Any
    pool: FramePool = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "pool", FramePool(self.layout, self.entry.reset, self.entry.drop))

    aug = property(lambda self: self.entry.aug)
    rev = property(lambda self: self.entry.rev)
    reset = property(lambda self: self.entry.reset)
    drop = property(lambda self: self.entry.drop)

    def forward(self, *args) -> tuple:
        """The forward sweep (args: the primal arguments, then the shadows) into a parked frame
        or a new one: (the kernel's return value, the frame)."""
        cell = np.array([self.pool.take()], dtype=np.uintp)
        try:
            value = self.aug(*args, cell)
        except BaseException:
            self.pool.put(int(cell[0]), reset=False)   # 0 unless the call never started
            raise
        return value, int(cell[0])


class Tape:
    """What `augmented_forward` kept for the reverse sweep. It owns its memory: freed when the
    object is collected (or by `free()`). `reverse` may run from any thread (one at a time)."""

    def __init__(self, split, frame, primal, shadows, positions, kernel_name):
        self._split, self._frame = split, frame
        self._primal, self._shadows = tuple(primal), tuple(shadows)
        self._positions, self.kernel_name = positions, kernel_name
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, split.pool.put, frame)

    @property
    def freed(self) -> bool:
        return not self._finalizer.alive

    def free(self) -> None:
        """Release the tape now (a later `reverse` raises ValueError); its memory is kept for
        the next `augmented_forward` of the same gradient (frame_pool.py)."""
        with self._lock:
            self._finalizer()

    @property
    def layout(self):
        """ir_passes' TapeLayout: what the tape holds, and why (`explain`)."""
        return self._split.layout

    @property
    def nbytes(self) -> int:
        """Bytes the tape holds: its frame and the arrays behind it, at their capacity."""
        with self._lock:
            if self.freed:
                return 0
            return frame_bytes(self._split.layout, self._frame)

    def iterations(self) -> dict:
        """{loop: iterations the forward sweep taped} (explain)."""
        with self._lock:
            if self.freed:
                return {}
            return {lp: ctypes.c_int64.from_address(self._frame + off).value
                    for lp, off in self._split.layout.counters.items()}

    def reverse(self, seed: float = 1.0) -> tuple:
        """The reverse sweep: the derivative of each Active argument (None elsewhere); the
        shadows given to `augmented_forward` are updated as `autodiff` updates them. `seed`
        seeds a float return value."""
        with self._lock:
            if self.freed:
                raise ValueError("this tape has been freed")
            derivs = self._split.rev(*self._primal, *self._shadows, float(seed), self._frame)
        result = [None] * self._positions[0]
        for pos, d in zip(self._positions[1], derivs):
            result[pos] = d
        return tuple(result)


def augmented_forward(kernel, *args) -> tuple:
    """Run the kernel once, through the augmented forward sweep: (its return value, a Tape).
    Arguments are annotated as for `autodiff`, positionally, one per kernel parameter."""
    dispatcher = as_dispatcher(kernel)
    _check_call(dispatcher, args)
    annotated = [as_annotation(a) for a in args]
    kinds = tuple(validate(i, a) for i, a in enumerate(annotated))
    if Activity.DUP in kinds:
        check_aliasing(annotated)
    split = compiled_split(dispatcher, annotated, kinds)
    primal = [a.value for a in annotated]
    shadows = [a.shadow for a in annotated if isinstance(a, (Duplicated, DuplicatedNoNeed))]
    value, frame = split.forward(*primal, *shadows)
    tape = Tape(split, frame, primal, shadows, (len(args), split.spec.active_positions),
                getattr(dispatcher, "__name__", "kernel"))
    return value, tape


def reverse(tape: Tape, seed: float = 1.0) -> tuple:
    """The reverse sweep from `tape` (Tape.reverse)."""
    if not isinstance(tape, Tape):
        raise TypeError(f"reverse takes the Tape augmented_forward returned, not {type(tape).__name__}")
    return tape.reverse(seed)


def release_tapes(kernel) -> int:
    """Free the frames the released tapes of `kernel`'s split gradients left parked
    (frame_pool.py); returns the bytes freed. Live tapes are not touched."""
    splits = builds(as_dispatcher(kernel), SPLIT)
    freed = 0
    for split in splits:
        freed += split.pool.nbytes
        split.pool.clear()
    return freed


def takes(kernel, args) -> bool:
    """Whether split mode takes this call: one positional argument per kernel parameter, and
    Duplicated arguments that are arrays (not tuples)."""
    params = _inspect.signature(as_dispatcher(kernel).py_func).parameters.values()
    return all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) and \
        len(params) == len(args) and not any(
            isinstance(a, (Duplicated, DuplicatedNoNeed)) and isinstance(a.shadow, tuple)
            for a in args)


def _check_call(dispatcher, args) -> None:
    if any(isinstance(a, (Duplicated, DuplicatedNoNeed)) and isinstance(a.shadow, tuple)
           for a in args):
        raise NotImplementedError("split mode takes Duplicated arrays, not tuples of them: "
                                  "pass each array as an argument of its own")
    params = _inspect.signature(dispatcher.py_func).parameters.values()
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) or \
            len(params) != len(args):
        raise TypeError(f"augmented_forward takes one positional argument per parameter of "
                        f"the kernel ({len(params)}), not {len(args)}")


def compiled_split(dispatcher, annotated, kinds, kept=()) -> CompiledSplit:
    """The split gradient for these annotated arguments. `kept`: positions of array arguments
    whose memory the caller keeps unchanged from the forward sweep to every reverse sweep, and
    that no other argument overlaps (enzyme_py.jax's operands); the reverse sweep reads those the
    kernel does not write from the arrays given to it instead of from the tape."""
    kept = tuple(sorted(kept))
    key = kinds + tuple(type_key(i, a.value) for i, a in enumerate(annotated)) + (("kept",) + kept
                                                                                 if kept else ())

    def make():
        argtypes = tuple(typeof(i, a.value) for i, a in enumerate(annotated))
        shadow_types = tuple(numba.typeof(a.shadow) for a in annotated
                             if isinstance(a, (Duplicated, DuplicatedNoNeed)))
        return build(SPLIT, Job(dispatcher, argtypes, kinds, shadow_types, kept))
    return cached(SPLIT, dispatcher, key, make)


# ---- the mode ---------------------------------------------------------------------------------

def _capture(job):
    cap = capture_host(job)
    if not (returns_float(cap.restype) or cap.restype == types.none or
            isinstance(cap.restype, (types.Integer, types.Boolean))):
        raise NotImplementedError(
            f"split mode takes a kernel returning a float, an integer or nothing, not "
            f"{cap.restype}: "
            f"write the result into an output array passed as Duplicated")
    return cap


def _symbols(job, cap, activity) -> tuple:
    return (gradient_name(cap.fn_name, cap.argtypes, activity) + "_split",)


def _transform(job, cap, cleaned, activity, names) -> Generated:
    module = parse_module(cleaned)
    layouts = arg_layouts(cap.argtypes)
    kept = [layouts[pos].data for pos in job.options or () if layouts[pos].data is not None]
    g = reverse_mode(module, cap.fn_name, list(activity), names[-1], counts=None,
                     extents=array_extents(cap.argtypes), vector_library=host_library(),
                     split_entries=True, kept=kept, runtime="declare")
    return Generated(print_module(module), g.layout)


def _link(name) -> tuple:
    return name + ".aug.0", (name + ".rev", name + ".reset", name + ".drop")


def _spec(job, cap, name) -> GradientSpec:
    return GradientSpec(cap.argtypes, cap.restype, job.kinds, name)


def _compile(entries, job, cap, tail) -> None:
    shadow_types = tuple(job.entry_types)
    entries.aug.compile(cap.argtypes + shadow_types + (numba.types.Array(numba.uintp, 1, "C"),))
    entries.rev.compile(cap.argtypes + shadow_types + (numba.float64, numba.uintp))
    entries.reset.compile((numba.uintp,))
    entries.drop.compile((numba.uintp,))


# ---- the entries ------------------------------------------------------------------------------

def _names(spec, extra):
    return [f"a{i}" for i in range(len(spec.argtypes))] + [f"s{i}" for i in spec.dup_positions] + extra


def _call(context, builder, spec, library, symbol, primal_args, extra, ret):
    """Call `symbol` with Numba's convention for the primal arguments, then `extra`."""
    primal_fnty = context.call_conv.get_function_type(spec.restype, list(spec.argtypes))
    retptr = cgutils.alloca_once(builder, primal_fnty.args[0].pointee)
    builder.store(cgutils.get_null_value(retptr.type.pointee), retptr)
    excinfo = cgutils.alloca_once(builder, primal_fnty.args[1].pointee)
    builder.store(cgutils.get_null_value(excinfo.type.pointee), excinfo)
    flat = list(context.get_arg_packer(spec.argtypes).as_arguments(builder, primal_args))
    fnty = ir.FunctionType(ret, list(primal_fnty.args) + [v.type for v in extra])
    fn = cgutils.get_or_insert_function(builder.module, fnty, symbol)
    code = builder.call(fn, [retptr, excinfo] + flat + list(extra))
    context.active_code_library.add_linking_library(library)
    return retptr, code, builder.bitcast(builder.load(excinfo), cgutils.voidptr_t)


def _shadows(context, builder, spec, sig, llargs, seed=None):
    """%retptr's shadow (the seed slot of a float return), then the arrays' data pointers."""
    nargs, k = len(spec.argtypes), len(spec.dup_positions)
    out = []
    if returns_float(spec.restype):
        slot = float_slot(context, builder, spec.restype)
        if seed is not None:
            builder.store(context.cast(builder, seed, types.float64, spec.restype), slot)
        out.append(slot)
    return out + [array_data(context, builder, t, v)
                  for t, v in zip(sig.args[nargs:nargs + k], llargs[nargs:nargs + k])]


def _entries(spec, library):
    nargs = len(spec.argtypes)

    def aug_typer(args):
        return status_type(spec.restype)(*args), aug_codegen

    def aug_codegen(context, builder, sig, llargs):
        """The forward sweep into the frame in cell llargs[-1] (0: a new one); a failed call
        frees it and leaves 0 there."""
        slot = builder.bitcast(array_data(context, builder, sig.args[-1], llargs[-1]),
                               cgutils.voidptr_t.as_pointer())
        retptr, code, exc = _call(context, builder, spec, library, spec.name + ".aug.0", llargs[:nargs],
                                  _shadows(context, builder, spec, sig, llargs[:-1]) + [slot],
                                  ir.IntType(32))
        excinfo_type = context.call_conv.get_function_type(types.none, []).args[1].pointee
        status = context.call_conv._get_return_status(builder, code,
                                                      builder.bitcast(exc, excinfo_type))
        with cgutils.if_unlikely(builder, status.is_error):
            fnty = ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t])
            drop = cgutils.get_or_insert_function(builder.module, fnty, spec.name + ".drop")
            builder.call(drop, [builder.load(slot)])
            builder.store(cgutils.get_null_value(cgutils.voidptr_t), slot)
        value = context.get_returned_value(builder, spec.restype, builder.load(retptr))
        return context.make_tuple(builder, sig.return_type, [code, exc, value])

    derivs = types.Tuple([spec.argtypes[i] for i in spec.active_positions])

    def rev_typer(args):
        return status_type(derivs)(*args), rev_codegen

    def rev_codegen(context, builder, sig, llargs):
        seed, frame = llargs[-2], llargs[-1]
        shadows = _shadows(context, builder, spec, sig, llargs, seed)
        outs = [float_slot(context, builder, spec.argtypes[i]) for i in spec.active_positions]
        frame_ptr = builder.inttoptr(frame, cgutils.voidptr_t)
        _call(context, builder, spec, library, spec.name + ".rev", llargs[:nargs],
              shadows + outs + [frame_ptr], ir.VoidType())
        ds = context.make_tuple(builder, derivs, [builder.load(o) for o in outs])
        zero = context.get_constant(types.int32, 0)
        null = cgutils.get_null_value(cgutils.voidptr_t)
        return context.make_tuple(builder, sig.return_type, [zero, null, ds])

    def frame_call(entry):
        def typer(args):
            return types.none(*args), codegen

        def codegen(context, builder, sig, llargs):
            fnty = ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t])
            fn = cgutils.get_or_insert_function(builder.module, fnty, spec.name + entry)
            builder.call(fn, [builder.inttoptr(llargs[0], cgutils.voidptr_t)])
            context.active_code_library.add_linking_library(library)
            return context.get_dummy_value()
        scope = {"call": make_intrinsic("split" + entry.replace(".", "_"), ["frame"], typer,
                                        f"{entry[1:]} {spec.name}")}
        exec("def run(frame):\n    call(frame)\n", scope)
        return numba.njit(nogil=True, no_cfunc_wrapper=True)(scope["run"])

    aug = make_entry(make_intrinsic("split_aug", _names(spec, ["frame"]), aug_typer, f"aug {spec.name}"),
                     _names(spec, ["frame"]), f"split forward {spec.name}", raise_status)
    rev = make_entry(make_intrinsic("split_rev", _names(spec, ["seed", "frame"]), rev_typer,
                                    f"rev {spec.name}"),
                     _names(spec, ["seed", "frame"]), f"split reverse {spec.name}", raise_status)
    return SplitEntries(aug, rev, frame_call(".reset"), frame_call(".drop"))


SPLIT = ModeSpec("split", CompiledSplit, _symbols, _transform, lambda job: None, _spec, _entries,
                 stored=False, capture=_capture, link=_link, compile=_compile)
