"""`autodiff`, `compile_kernel` and `explain` for numba-cuda kernels (docs/cuda.md).

    autodiff(kernel[blocks, threads], Duplicated(x, dx), Duplicated(y, dy))          # reverse
    autodiff(kernel[blocks, threads], Duplicated(x, tx), Duplicated(y, ty), mode=Forward)
    autodiff(kernel[blocks, threads], BatchDuplicated(x, (t1, t2)), BatchDuplicated(y, (u1, u2)),
             mode=Forward)                                       # k directions in one launch

The same annotations and contract as on the CPU (docs/semantics.md): shadows accumulate in
reverse mode (an overwritten location's shadow is consumed), hold tangents of the initial and
then final memory in forward mode; the result is a tuple with each Active argument's derivative
(reverse) or None (forward: kernels return nothing). Arrays may be device arrays (no copy) or
host arrays (copied to the device and back, as numba-cuda does).

A gradient is built once per (kernel, argument types, activity, mode, cache, whether the arrays
are disjoint, whether the launch is one-dimensional, compute capability, accumulate,
deterministic). Building needs no GPU
(`compile_kernel(..., cc=(8, 0))`); launching does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import ctypes
import inspect
import re

import numpy as np
from numba import cuda

from ir_passes import Activity, GpuLaunch, UnsupportedError, dynamic_shared_bytes

from ..annotations import Active, BatchDuplicated, Const, Forward, Reverse, as_annotation
from ..modes.forward import MAX_WIDTH
from ..modes.pipeline import build, cached
from ..modes.records import Generated, Job, ModeSpec
from .capture import capture
from .cleanup import cleanup
from .codegen import ptx
from .convention import arg_layouts
from .kernel import forward_kernel, reverse_kernel
from .launch import LoadedKernel, derivative_slots, lanes, parameters, scratch

DEFAULT_CC = (8, 0)
WARP_ADD_CC = (7, 0)     # activemask and match.any.sync: warp-aggregated shadow updates
_BYTE_BOUNDS = getattr(getattr(np.lib, "array_utils", None), "byte_bounds", None)


@dataclass
class CompiledKernel:
    """A generated CUDA kernel and the texts that produced it.

    `name`: its symbol. `mode`: Reverse or Forward. `kinds`: an Activity per argument.
    Texts, for debugging: `captured` (numba-cuda's NVVM IR, linked), `cleaned` (after O2: the
    input of ir_passes), `generated` (the kernel, its body and helpers: what `ptx` compiles).
    `updates`: how each shadow update is made (ir_passes/transforms/reverse/shadows/shadow_updates.py).
    `layout`: what the tape holds (reverse mode). `scratch_sites`: deterministic=True's
    fixed-order sums, each with an 8-byte slot per block in the scratch memory the kernel takes
    as its last parameter (none when 0). `dynamic`: a dynamic shared array's shadows follow
    the launch's dynamic shared memory, whose size the kernel takes last
    (ir_passes.dynamic_shared_bytes)."""
    name: str
    mode: Any
    kinds: tuple
    argtypes: tuple
    cc: tuple
    captured: str
    cleaned: str
    generated: str
    activity: list
    shared: list
    updates: list = field(default_factory=list)
    layout: Any = None
    scratch_sites: int = 0
    dynamic: Any = None
    _ptx: dict = field(default_factory=dict)
    _loaded: dict = field(default_factory=dict)
    _slots: dict = field(default_factory=dict)      # (device, thread) -> derivative slots

    def ptx(self, cc=None) -> str:
        """The PTX of the kernel for compute capability cc (default: the one it was built for)."""
        cc = tuple(cc or self.cc)
        if cc not in self._ptx:
            self._ptx[cc] = ptx(self.generated, self.name, cc)
        return self._ptx[cc]

    def load(self):
        """The kernel loaded on the current device (launch.LoadedKernel)."""
        dev = cuda.get_current_device()
        if dev.id not in self._loaded:
            self._loaded[dev.id] = LoadedKernel(self.ptx(dev.compute_capability), self.name)
        return self._loaded[dev.id]


_stats = {"compiles": 0}


def is_launch(obj) -> bool:
    """Is obj numba-cuda's `kernel[blocks, threads]` (checked without importing numba-cuda)?"""
    t = type(obj)
    return t.__module__.startswith("numba.cuda") and t.__name__ == "_LaunchConfiguration"


def is_kernel(obj) -> bool:
    t = type(obj)
    return t.__module__.startswith("numba.cuda") and t.__name__ == "CUDADispatcher"


def autodiff(config, *args, mode=Reverse, cache="auto", accumulate=None, deterministic=False):
    """Differentiate the launch `config` (`kernel[blocks, threads]`) of a numba-cuda kernel.

    Reverse mode returns a tuple with the derivative of each Active argument (summed over all
    threads), None elsewhere; forward mode returns None (the tangents are in the shadows).
    `accumulate="float64"` (reverse mode): float32 adjoints are summed in float64, the float32
    shadows widened to float64 for the launch and rounded back once after it.
    `deterministic=True` (reverse mode): the same bits on every run: sums over threads in a
    fixed order, no float atomics; a kernel whose gradient needs atomic adds is refused."""
    if is_kernel(config):
        raise TypeError("autodiff needs the launch: kernel[blocks, threads], not the kernel alone")
    compiled, annotated = _compiled(config, args, mode, cache, None, accumulate, deterministic)
    loaded = compiled.load()
    stream, retr = config.stream, []
    wide = accumulate == "float64"
    params = parameters(compiled.argtypes, annotated, compiled.kinds, stream, retr, wide)
    slots = []
    if mode is Forward:
        params += [t for ty, a, k in zip(compiled.argtypes, annotated, compiled.kinds)
                   if k == Activity.ACTIVE for t in _tangents(ty, a)]
    else:
        pointers, slots = derivative_slots(compiled.argtypes, compiled.kinds, compiled._slots,
                                           stream, wide)
        params += pointers
        if compiled.scratch_sites:
            params.append(scratch(compiled.scratch_sites, config.griddim, compiled._slots, stream))
    if compiled.dynamic is not None:
        params.append(ctypes.c_int64(config.sharedmem))
    loaded.launch(config.griddim, config.blockdim, stream,
                  dynamic_shared_bytes(config.sharedmem, compiled.dynamic), params)
    for wb in retr:
        wb()
    if mode is Forward:
        return None
    result, it = [None] * len(args), iter(slots)
    for pos, kind in enumerate(compiled.kinds):
        if kind == Activity.ACTIVE:
            result[pos] = float(next(it).copy_to_host(stream=stream)[0])
    return tuple(result)


def compile_kernel(config, *args, mode=Reverse, cache="auto", cc=None,
                   accumulate=None, deterministic=False) -> CompiledKernel:
    """Build (or fetch) the kernel `autodiff` launches for these arguments. Needs no GPU: `cc`
    is the compute capability to build for (default: the current device's, else (8, 0)).
    `config` is `kernel[blocks, threads]`; `kernel` alone is taken as a one-dimensional launch.
    With `accumulate="float64"` the kernel takes float64 shadows of the float32 arrays (element
    k at byte 8k: a contiguous float64 array of the same shape and order) and float64
    derivative outputs of float32 Active arguments. With `deterministic=True` and
    `scratch_sites` > 0 it takes the scratch memory last (launch.scratch)."""
    return _compiled(config, args, mode, cache, cc, accumulate, deterministic)[0]


def _compiled(config, args, mode, cache, cc, accumulate=None, deterministic=False):
    if mode not in (Reverse, Forward):
        raise ValueError(f"mode must be enzyme_py.Reverse or Forward, not {mode!r}")
    if cache not in ("auto", "minimal", "always"):
        raise ValueError(f"cache must be 'auto', 'minimal' or 'always', not {cache!r}")
    if accumulate not in (None, "float64"):
        raise ValueError(f"accumulate must be None or 'float64', not {accumulate!r}")
    if accumulate is not None and mode is not Reverse:
        raise ValueError("accumulate='float64' is for reverse mode: forward mode sums nothing "
                         "across threads")
    if deterministic not in (False, True):
        raise TypeError(f"deterministic must be True or False, not {deterministic!r}")
    if deterministic and mode is not Reverse:
        raise ValueError("deterministic=True is for reverse mode: forward mode sums nothing "
                         "across threads")
    dispatcher, launch = _launch_of(config)
    annotated = [as_annotation(a) for a in args]
    kinds = tuple(_validate(i, a, mode) for i, a in enumerate(annotated))
    width = _width(annotated)
    if accumulate is not None:
        _check_widenable(annotated, kinds)
    ranges = _ranges(annotated)
    _check_aliasing(ranges)
    argtypes = tuple(_typeof(dispatcher, i, a.value) for i, a in enumerate(annotated))
    cc = tuple(cc) if cc is not None else _current_cc()
    disjoint = not any(True for _ in _overlaps(ranges))
    key = (kinds, argtypes, mode.name, cache, disjoint, launch, cc, accumulate, deterministic,
           width)
    spec = CUDA_FORWARD if mode is Forward else CUDA_REVERSE
    job = Job(dispatcher, argtypes, kinds, (),
              CudaOptions(mode, cache, disjoint, launch, cc, accumulate == "float64", deterministic,
                          width))
    return cached(spec, dispatcher, key, lambda: build(spec, job)), annotated


# ---- the modes: capture -> cleanup -> ir_passes -> module text (docs/cuda.md); PTX on demand --

@dataclass(frozen=True)
class CudaOptions:
    mode: Any
    cache: str
    noalias: bool
    launch: GpuLaunch
    cc: tuple
    wide: bool = False         # float32 adjoints summed in float64 (accumulate="float64")
    deterministic: bool = False     # fixed-order sums, no float atomics
    width: int = 1                  # forward mode: directions (BatchDuplicated)


def _capture(job):
    return capture(job.dispatcher, job.argtypes, job.options.cc)


def _clean(job, cap) -> str:
    return cleanup(cap.text, cap.fn_name, job.options.cc)


def _transform(job, cap, cleaned, activity, names) -> Generated:
    o, name = job.options, names[-1]
    try:
        if o.mode is Forward:
            gen = forward_kernel(cleaned, cap.fn_name, job.argtypes, job.kinds, name,
                                 noalias=o.noalias, width=o.width)
        else:
            gen = reverse_kernel(cleaned, cap.fn_name, job.argtypes, job.kinds, name, o.launch,
                                 cache="minimal" if o.cache == "auto" else o.cache, noalias=o.noalias,
                                 warp_add=tuple(o.cc) >= WARP_ADD_CC, wide=o.wide,
                                 deterministic=o.deterministic)
    except Exception as exc:
        raise _in_python_terms(exc, job.dispatcher, job.argtypes) from None
    _stats["compiles"] += 1
    layout = gen.gradient.layout if gen.gradient is not None else None
    return Generated(gen.text, layout, dict(name=name, mode=o.mode, kinds=job.kinds,
                                            argtypes=job.argtypes, cc=tuple(o.cc),
                                            activity=gen.activity, shared=gen.shared,
                                            updates=gen.updates, scratch_sites=gen.scratch_sites,
                                            dynamic=gen.dynamic))


def _cuda_mode(mode) -> ModeSpec:
    """The ModeSpec of a CUDA kernel in `mode`: no link and no entry (the generated kernel's
    text is the result); the disk cache keeps the texts."""
    return ModeSpec(f"cuda-{mode.name.lower()}", CompiledKernel,
                    lambda job, cap, activity: (_name(job.dispatcher, job.kinds, job.options.mode),),
                    _transform, lambda job: (job.kinds, job.options.cache, job.options.noalias,
                                             job.options.launch, tuple(job.options.cc),
                                             job.options.wide, job.options.deterministic,
                                             job.options.width),
                    capture=_capture, clean=_clean, activity=lambda job, cap: None)


def _name(dispatcher, kinds, mode) -> str:
    tag = "".join({Activity.CONST: "c", Activity.DUP: "d", Activity.ACTIVE: "a"}[Activity(k)] for k in kinds)
    return f"enzpy_{dispatcher.py_func.__name__}_{mode.name.lower()}_{tag}_{_stats['compiles']}"


def _launch_of(config):
    """(dispatcher, GpuLaunch) for `kernel[blocks, threads]`; a bare kernel is one-dimensional."""
    if is_kernel(config):
        return config, GpuLaunch()
    if not is_launch(config):
        raise TypeError(f"expected a numba-cuda kernel launch `kernel[blocks, threads]`, not "
                        f"{type(config).__name__}")
    return config.dispatcher, GpuLaunch(_flat(config.griddim), _flat(config.blockdim))


def _flat(dim) -> bool:
    dims = tuple(dim) if not isinstance(dim, int) else (dim,)
    return all(d == 1 for d in dims[1:])


def _current_cc():
    if cuda.is_available():
        return tuple(cuda.get_current_device().compute_capability)
    return DEFAULT_CC


def _tangents(ty, a) -> list:
    """An Active argument's tangent, or its k tangents (Active(x, (dx_1, ..., dx_k)))."""
    ts = a.tangent if isinstance(a.tangent, (tuple, list)) else (a.tangent,)
    c = ctypes.c_float if str(ty) == "float32" else ctypes.c_double
    return [c(float(t)) for t in ts]


# ---- validation -----------------------------------------------------------

def _validate(pos, ann, mode) -> str:
    where = f"argument {pos}"
    if isinstance(ann, BatchDuplicated) and mode is not Forward:
        raise NotImplementedError(f"{where}: BatchDuplicated (k seeds in one launch) is not "
                                  "supported for CUDA kernels in reverse mode; launch once per "
                                  "seed (forward mode takes BatchDuplicated: k directions)")
    if isinstance(ann, Const):
        return Activity.CONST
    if isinstance(ann, Active):
        if not isinstance(ann.value, (float, np.floating)) or _is_array(ann.value):
            raise TypeError(f"{where}: Active needs a real float scalar, got "
                            f"{type(ann.value).__name__}; pass float(x) or mark it Const")
        if mode is Forward and ann.tangent is None:
            raise TypeError(f"{where}: in forward mode Active(x, dx) needs the tangent dx "
                            "(or Active(x, (dx_1, ..., dx_k)) for k directions)")
        if isinstance(ann.tangent, (tuple, list)) and mode is not Forward:
            raise TypeError(f"{where}: k tangents are for forward mode")
        return Activity.ACTIVE
    for shadow in lanes(ann):
        _check_shadow(where, ann.value, shadow)
    return Activity.DUP


def _width(annotated) -> int:
    """The number of directions: every BatchDuplicated's shadows and every Active argument's
    tangents (a tuple) must agree; 1 without either."""
    widths = {len(a.shadows) for a in annotated if isinstance(a, BatchDuplicated)}
    widths |= {len(a.tangent) for a in annotated
               if isinstance(a, Active) and isinstance(a.tangent, (tuple, list))}
    if len(widths) > 1:
        raise ValueError(f"arguments with {sorted(widths)} directions: every BatchDuplicated and "
                         "Active tangent tuple needs the same number")
    width = widths.pop() if widths else 1
    if not 1 <= width <= MAX_WIDTH:
        raise ValueError(f"BatchDuplicated takes 1 to {MAX_WIDTH} shadows, got {width}")
    return width


def _check_shadow(where, value, shadow) -> None:
    if not _is_array(value):
        raise TypeError(f"{where}: Duplicated is for float arrays (NumPy or device arrays), got "
                        f"{type(value).__name__}; use Active(x) for a float scalar")
    if np.dtype(value.dtype).kind != "f":
        raise TypeError(f"{where}: only float arrays can be differentiated, got dtype "
                        f"{value.dtype}; mark it Const")
    if not _is_array(shadow):
        raise TypeError(f"{where}: the shadow must be an array, got {type(shadow).__name__}")
    for what in ("dtype", "shape", "strides"):
        if _attr(value, what) != _attr(shadow, what):
            raise ValueError(f"{where}: the shadow's {what} {_attr(shadow, what)} differs from the "
                             f"array's {_attr(value, what)}; use an array of zeros like it")
    if isinstance(shadow, np.ndarray) and not shadow.flags.writeable:
        raise ValueError(f"{where}: the shadow is read-only; derivatives are added into it")


def _check_widenable(annotated, kinds) -> None:
    """accumulate="float64" copies float32 shadows into contiguous float64 arrays."""
    for pos, (a, kind) in enumerate(zip(annotated, kinds)):
        if kind != Activity.DUP or np.dtype(a.value.dtype) != np.float32:
            continue
        if not _contiguous(a.shadow):
            raise ValueError(f"argument {pos}: accumulate='float64' needs a contiguous float32 "
                             "shadow (C or Fortran order); pass a copy")


def _contiguous(a) -> bool:
    """Is array a (host or `__cuda_array_interface__`) dense in C or Fortran order?"""
    if isinstance(a, np.ndarray):
        return a.flags.c_contiguous or a.flags.f_contiguous
    cai = a.__cuda_array_interface__
    shape, strides = tuple(cai["shape"]), cai.get("strides")
    if strides is None:
        return True
    size = np.dtype(cai["typestr"]).itemsize
    return any(_dense(shape, strides, size, dims) for dims in
               (range(len(shape) - 1, -1, -1), range(len(shape))))


def _dense(shape, strides, step, dims) -> bool:
    for k in dims:                  # innermost first; a dimension of 1 may have any stride
        if shape[k] > 1 and strides[k] != step:
            return False
        step *= shape[k]
    return True


def _is_array(v) -> bool:
    return isinstance(v, np.ndarray) or hasattr(v, "__cuda_array_interface__")


def _attr(a, what):
    if what == "dtype":
        return np.dtype(a.dtype)
    return tuple(getattr(a, what))


def _typeof(dispatcher, pos, value):
    try:
        return dispatcher.typeof_pyval(value)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"argument {pos}: numba-cuda cannot type a {type(value).__name__} "
                        f"({exc})") from None


def _ranges(annotated) -> list:
    """(kind, start, end, argument, which) of every array's memory: host or device."""
    out = []
    for i, a in enumerate(annotated):
        shadows = lanes(a) if not isinstance(a, (Const, Active)) else ()
        named = [("shadow" if len(shadows) == 1 else f"shadow {k}", s) for k, s in enumerate(shadows)]
        for which, arr in [("array", a.value)] + named:
            if not _is_array(arr):
                continue
            if isinstance(arr, np.ndarray):
                lo, hi = _byte_bounds(arr)
                out.append(("host", lo, hi, i, which))
            else:
                lo, hi = _device_bounds(arr.__cuda_array_interface__)
                out.append(("device", lo, hi, i, which))
    return out


def _device_bounds(cai) -> tuple:
    """[first byte, one past the last) a `__cuda_array_interface__` array touches, with its
    strides (a strided view reaches further than its size says)."""
    base = cai["data"][0]
    shape = tuple(cai["shape"])
    itemsize = np.dtype(cai["typestr"]).itemsize
    if any(n == 0 for n in shape):
        return base, base + 1
    strides = cai.get("strides")
    if strides is None:                  # C-contiguous
        strides, step = [], itemsize
        for n in reversed(shape):
            strides.insert(0, step)
            step *= n
    lo = base + sum(s * (n - 1) for s, n in zip(strides, shape) if s < 0)
    hi = base + sum(s * (n - 1) for s, n in zip(strides, shape) if s > 0) + itemsize
    return lo, hi


def _byte_bounds(a):
    return (_BYTE_BOUNDS or np.byte_bounds)(a)     # NumPy 2 moved it


def _overlaps(ranges):
    for n, a in enumerate(ranges):
        for b in ranges[n + 1:]:
            if a[0] == b[0] and a[1] < b[2] and b[1] < a[2]:
                yield a, b


def _check_aliasing(ranges) -> None:
    """Shadows need memory of their own (`ranges`: _ranges of the annotated arguments)."""
    for a, b in _overlaps(ranges):
        lane_apart = a[3] == b[3] and a[4] != b[4]       # two lanes of one argument
        if lane_apart or "shadow" in (a[4][:6], b[4][:6]) and a[4][:6] != b[4][:6]:
            raise ValueError(f"argument {a[3]}'s {a[4]} and argument {b[3]}'s {b[4]} share "
                             "memory; shadows need memory of their own")


def _in_python_terms(exc, dispatcher, argtypes):
    """Name the argument when ir_passes reports active data stored into constant memory."""
    index = getattr(exc, "param_index", None)
    if index is None:
        return exc
    names = list(inspect.signature(dispatcher.py_func).parameters)
    for pos, layout in enumerate(arg_layouts(argtypes)):
        if index in layout.params:
            name = names[pos] if pos < len(names) else f"#{pos}"
            exc.args = (f"active data is stored into argument {pos} (`{name}`), which is Const"
                        + (f" at {exc.location[0]}:{exc.location[1]}" if exc.location else "")
                        + f"\n  LLVM instruction: {exc.instruction.strip()}"
                        + f"\n  Pass `{name}` as Duplicated({name}, shadow) so its derivative has "
                        "a home.",)
            exc.argument = name
    return exc


# ---- explain --------------------------------------------------------------

@dataclass
class KernelExplanation:
    """What the CUDA gradient does with each shadow update, and what its tape holds."""
    kernel: str
    updates: list
    cached: list
    unsupported: str = ""
    notes: list = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"explain({self.kernel}) on the GPU"]
        if self.unsupported:
            lines.append(f"  cannot differentiate: {self.unsupported}")
            return "\n".join(lines)
        lines.append(f"  shadow updates: {len(self.updates)}")
        for u in self.updates:
            where = f"{u.location[0]}:{u.location[1]}: " if u.location else ""
            why = f" ({u.reason})" if u.reason else ""
            lines.append(f"    {where}{u.instruction.strip()}\n      {u.how}{why}")
        lines += [f"  note: {n}" for n in self.notes]
        loops = [c for c in self.cached if c.loop is not None]
        where = "in the thread's frame (registers or local memory)"
        if loops:
            where += f"; {len(loops)} once per loop iteration, in arrays: in the frame for a loop " \
                     "with a small constant trip bound, else on the device heap"
        lines.append(f"  cached values: {len(self.cached)}, {where}")
        for c in self.cached:
            per = f"{c.bytes} B per iteration of loop {c.loop}" if c.loop is not None \
                else f"{c.bytes} B once"
            why = f"cached because {c.reason}; " if c.reason else ""
            lines.append(f"    {c.instruction.strip()}\n      {why}{per}")
        return "\n".join(lines)


def explain(config, *args, cache="auto", accumulate=None, deterministic=False) -> KernelExplanation:
    """How the reverse-mode gradient of a CUDA kernel makes each shadow update (plain, atomic,
    privatised per block, in block order with deterministic=True) and what it tapes. Builds the
    gradient; launches nothing."""
    dispatcher, _ = _launch_of(config)
    name = dispatcher.py_func.__name__
    try:
        compiled = compile_kernel(config, *args, cache=cache, accumulate=accumulate,
                                  deterministic=deterministic)
    except UnsupportedError as exc:
        return KernelExplanation(name, [], [], unsupported=str(exc))
    cached = compiled.layout.cached if compiled.layout is not None else []
    notes = _float32_notes(compiled.updates, accumulate)
    if deterministic:
        notes.append(f"deterministic=True: no float atomics; {compiled.scratch_sites} sum(s) "
                     "over threads store each block's sum in a slot of its own, and the block "
                     "that finishes last adds the slots in block order")
    return KernelExplanation(name, list(compiled.updates), list(cached), notes=notes)


_FLOAT32 = re.compile(r"\b(?:load|store|fadd ptr [^,]+,) float\b")


def _float32_notes(updates, accumulate=None) -> list:
    """The rounding risk of float32 shadows that many threads or iterations add into."""
    summed = [u for u in updates if u.how != "private" and _FLOAT32.search(u.instruction)]
    if not summed:
        return []
    where = sorted({f"{u.location[0]}:{u.location[1]}" for u in summed if u.location})
    lines = ', '.join(where) or 'no source line'
    if accumulate == "float64":
        return [f"{len(summed)} float32 shadow update(s) sum the adjoints of many threads or "
                f"iterations ({lines}) in float64 (accumulate='float64'): the float32 shadows "
                "are rounded once, after the launch"]
    return [f"{len(summed)} float32 shadow update(s) sum the adjoints of many threads or "
            f"iterations in float32 ({lines}): where large terms cancel (x[j] - x[i] with "
            "j == i adds +d and -d into one shadow), the float32 sum can lose a much smaller "
            "gradient to rounding; enzyme_py.cuda.api.autodiff(..., accumulate='float64') sums "
            "them in float64"]


CUDA_REVERSE, CUDA_FORWARD = _cuda_mode(Reverse), _cuda_mode(Forward)
