"""A GPU kernel's derivative as a kernel: shared arrays as parameters, AD, a wrapper.

ir_passes differentiates a function and its parameters' memory. A kernel's shared arrays
(globals in address space 3) are first made parameters of the kernel's function, which becomes a
plain internal function (the *body*; `noalias`: shared memory is no other parameter's). Its
gradient (or tangent function) is wrapped in a kernel that owns a shadow of each shared array,
also in shared memory, zeroes it (every thread a part, then a barrier) and calls the body's
gradient with the shared arrays and their shadows:

    define ptx_kernel void @<name>(<kernel params>, <shadows>, <derivative outputs or tangents>)

The body's gradient runs as many threads at once (`Threads`): the sharing analysis finds the
global thread index (one-dimensional launches) and the thread index in the block (for shared
memory); shadow updates other threads may make too are atomic or privatised per block
(transforms/reverse/shadows/shadow_updates.py). Math rules call libdevice (`module.math_names`).
Warp shuffles of a float's bits become float shuffles first (prepare/float_shuffles.py), whose
rules exchange adjoints and tangents between lanes (rules/nvptx.py); the float64 shuffle and
adjoint helpers get their bodies after AD (runtime/warp_shuffle.py).
With `deterministic` no float is added atomically (Threads.deterministic): the wrapper kernel
takes a last parameter, the scratch memory of the fixed-order block sums (`scratch_sites` sums,
runtime/block_sum.py), whose address thread 0 puts in shared memory before the first barrier;
an update that would still be atomic is refused.
A dynamic shared array (`cuda.shared.array(0, T)`, an external global of no size: the launch's
dynamic shared memory) has its shadows in the same dynamic region, after the kernel's own bytes:
the wrapper takes the launch's dynamic size as a last parameter (`i64 %dyn.bytes`) and the
launch must ask for `dynamic_shared_bytes` (each shadow from a 16-byte boundary). The host's
code reads the array's size from `%dynamic_smem_size` (inline asm), which in the wrapper's
launch counts the shadows too: the body takes the primal's size as a parameter instead. Every
dynamic array starts at the region's start, so a kernel with two is refused (they alias).
The host gives the activity of the kernel's own parameters, its arrays' extents and the
row-length parameter of each C-contiguous 2-D array.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..analysis.sharing import nvptx_iterations
from ..errors import UnsupportedError
from ..ir import types as T
from ..ir.edit import replace_uses
from ..ir.instructions import Instruction
from ..ir.parser import Tokens, parse_module, parse_type
from ..ir.printer import print_module
from ..ir.values import Argument, Constant, ConstInt
from ..options import Activity
from ..rules import libdevice
from ..runtime.heap import Heap
from ..runtime import warp_shuffle
from ..runtime.helpers import merge
from ..runtime.source import fill, sections
from .forward.driver import forward_mode
from .prepare.float_shuffles import fuse_float_shuffles
from .reverse.sweeps.driver import reverse_mode
from .reverse.shadows.shadow_updates import ATOMIC, Threads

# CUDA's device-side malloc / free (the tape of loops whose trip count is not known in advance)
DEVICE_HEAP = Heap("malloc", "free", None)
# the kernel around the derivative, in pieces (runtime/gpu_kernel.ll)
PIECES = sections("gpu_kernel")
_SHARED = re.compile(r'^@("?[\w.$]+"?) = [^\n]*addrspace\(3\) global \[(\d+) x (\w+)\]')


@dataclass(frozen=True)
class SharedArray:
    """A `cuda.shared.array`: its global, element type and count, and the body's parameter."""
    symbol: str
    element: T.Type
    count: int
    param: int


@dataclass
class GpuKernel:
    """The module text with the kernel `name`, and what went into it."""
    text: str
    name: str
    activity: list
    shared: list
    gradient: object = None           # ir_passes' Gradient (reverse mode): layout, updates
    updates: list = field(default_factory=list)
    scratch_sites: int = 0            # deterministic block sums: slots per block in the scratch
    dynamic: tuple | None = None      # a dynamic shared array's shadows: dynamic_shared_bytes


@dataclass(frozen=True)
class GpuLaunch:
    """What the gradient is specialised on: whether grid and block are one-dimensional (then
    `cuda.grid(1)` is injective and the updates it indexes are private)."""
    grid_1d: bool = True
    block_1d: bool = True


def gpu_reverse_kernel(text, fn_name, activity, name, extents, rows, launch=GpuLaunch(),
                       cache="minimal", noalias=False, warp_add=False, wide=None,
                       deterministic=False) -> GpuKernel:
    """Add kernel `name`, the reverse-mode gradient of kernel `fn_name` (module `text`).
    `activity`: one per parameter of the kernel; `extents`: {data param: Extent}; `rows`:
    {data param: its row-length param} (C-contiguous 2-D arrays). `wide`: None, or the data
    params of the float32 arrays, whose adjoints are then summed in float64: their shadows are
    float64 arrays (as are float32 shared arrays' shadows and float32 Active parameters'
    derivative outputs; Threads.wide). `deterministic`: no float atomics (module docstring)."""
    module, body, shared = _prepare(text, fn_name)
    activity = list(activity) + [_shared_activity(s) for s in shared] + _size_activity(shared)
    if wide is not None:       # the differentiated float32 arrays, shared ones included
        wide = frozenset(k for k in wide if activity[k] == Activity.DUP) | \
            {s.param for s in shared if s.element == T.f32}
    threads = Threads(_iterations(body, shared, rows, launch), block_sum="nvptx",
                      warp_add=warp_add and not deterministic, wide=wide,
                      deterministic=deterministic)
    g = reverse_mode(module, fn_name, activity, name + ".body", cache=cache, noalias=noalias,
                     counts=None, extents=extents, heap=DEVICE_HEAP,
                     threads=threads, park=False)
    if deterministic:
        _refuse_atomic_adds(g.updates.report)
    n_kernel = len(activity) - len(shared) - len(_size_activity(shared))
    dout = [k for k, a in enumerate(activity) if a == Activity.ACTIVE]
    extra = [("ptr", f"dout.{k}") for k in dout]
    sites = len(g.updates.sites)
    dynamic = _finish(module, body, shared, activity, n_kernel, name, extra,
                      wide=wide is not None, scratch=sites > 0)
    warp_shuffle.define(module)
    return GpuKernel(print_module(module), name, activity, shared, g, list(g.updates.report),
                     scratch_sites=sites, dynamic=dynamic)


def _refuse_atomic_adds(report) -> None:
    """deterministic: an atomic add's sum depends on the order the threads come in. (The atomic
    exchange that consumes a stored location's shadow is kept: in a race-free primal one thread
    stores there.)"""
    for u in report:
        if u.how == ATOMIC and not u.instruction.lstrip().startswith("store"):
            raise UnsupportedError(
                "deterministic=True: threads add into a shadow other threads may update too, "
                f"which takes an atomic add ({u.reason})", u.instruction,
                tuple(u.location) if u.location else None,
                hint="Only the thread's own locations and those every thread reads alike "
                     "(w[0], an Active scalar) have fixed-order sums; differentiate without "
                     "deterministic=True.")


def gpu_forward_kernel(text, fn_name, activity, name, extents, noalias=False,
                       width=1) -> GpuKernel:
    """Add kernel `name`, the forward-mode tangent kernel of `fn_name` for `width` directions:
    each differentiated array (shared ones included) has `width` shadows, each Active
    parameter `width` tangents (forward_mode's convention)."""
    module, body, shared = _prepare(text, fn_name)
    activity = list(activity) + [_shared_activity(s) for s in shared] + _size_activity(shared)
    forward_mode(module, fn_name, activity, name + ".body", extents=extents,
                 noalias_shadows=noalias, width=width)
    n_kernel = len(activity) - len(shared) - len(_size_activity(shared))
    extra = [(str(body.params[k].type), f"tangent.{k}{_lane(width, l)}")
             for k, a in enumerate(activity) if a == Activity.ACTIVE for l in range(width)]
    dynamic = _finish(module, body, shared, activity, n_kernel, name, extra, width=width)
    warp_shuffle.define(module)
    return GpuKernel(print_module(module), name, activity, shared, dynamic=dynamic)


def dynamic_shared_bytes(sharedmem: int, dynamic) -> int:
    """The dynamic shared memory a derivative kernel needs for a launch that gives the primal
    `sharedmem` bytes: those, then each shadow of its dynamic shared array, each from a 16-byte
    boundary (`GpuKernel.dynamic`: (bytes per element of the array, of its shadow, shadows), or
    None: no dynamic shadow)."""
    if dynamic is None:
        return sharedmem
    primal, shadow, lanes = dynamic
    step = (sharedmem // primal * shadow + 15) // 16 * 16
    return (sharedmem + 15) // 16 * 16 + lanes * step


def _iterations(body, shared, rows, launch):
    """How the sharing analysis finds a thread (analysis/sharing.py): shared arrays are local to
    a block; a C-contiguous 2-D array's rows are `shape[1]` items long."""
    local = {id(body.params[s.param]) for s in shared}
    rows = {id(body.params[data]): id(body.params[length]) for data, length in rows.items()}

    def row_extent(root, value):
        return value is not None and rows.get(id(root)) == id(value)

    return lambda f: nvptx_iterations(f, launch.grid_1d, launch.block_1d,
                                      lambda r: id(r) in local, row_extent)


def _size_activity(shared) -> list:
    """The activity of the body's last parameter, the dynamic shared size (none without)."""
    return [Activity.CONST] if any(s.count == 0 for s in shared) else []


def _shared_activity(s) -> str:
    return Activity.DUP if isinstance(s.element, T.FloatType) else Activity.CONST


def _prepare(text, fn_name):
    module = parse_module(text)
    module.math_names = libdevice.spelling
    body = module.functions[fn_name]
    shared = shared_to_params(module, body)
    if any(s.count == 0 for s in shared):
        _dynamic_size_param(body)
    fuse_float_shuffles(module, body)
    body.prefix = "define internal"
    module.items = [x for x in module.items if not (isinstance(x, str) and x.startswith("@llvm.used"))]
    return module, body, shared


def shared_to_params(module, fn) -> list:
    """Make each shared array `fn` uses a parameter of its own (see the module docstring)."""
    arrays = []
    for item in module.items:
        m = _SHARED.match(item) if isinstance(item, str) else None
        if m is None:
            continue
        if " external " in item and int(m.group(2)) != 0:
            raise UnsupportedError("a shared array defined outside the kernel's module", item.strip())
        if int(m.group(2)) == 0 and any(a.count == 0 for a in arrays):
            raise UnsupportedError("two dynamic shared arrays (`cuda.shared.array(0, ...)`): "
                                   "both start at the start of the one dynamic region",
                                   item.strip(), hint="Use one dynamic shared array and index "
                                   "into it, or give the arrays constant sizes.")
        symbol = m.group(1)
        arg = Argument(T.ptr, f"shared.{len(arrays)}", "noalias", len(fn.params))
        fn.params.append(arg)
        arrays.append(SharedArray(symbol, _element(m.group(3)), int(m.group(2)), arg.index))   # 0: dynamic
    if arrays:
        _replace_shared_uses(fn, {a.symbol: fn.params[a.param] for a in arrays})
    return arrays


def _dynamic_size_param(fn) -> None:
    """The kernel's reads of `%dynamic_smem_size` (inline asm) become a last parameter."""
    size = Argument(T.i32, "dynamic.size", "", len(fn.params))
    fn.params.append(size)
    for block in fn.blocks:
        for inst in list(block.instructions):
            if inst.opcode == "opaque" and "%dynamic_smem_size" in (inst.raw or ""):
                replace_uses(fn, inst, size)
                block.instructions.remove(inst)


def _element(text) -> T.Type:
    return parse_type(Tokens([text], 0))


_CAST = "addrspacecast (ptr addrspace(3) @{} to ptr)"
_GEP = re.compile(r"getelementptr (?:inbounds )?(?:nuw )?(?:nusw )?\((\w+), ptr addrspacecast "
                  r"\(ptr addrspace\(3\) @(\S+) to ptr\), i64 (-?\d+)\)$")


def _replace_shared_uses(fn, params) -> None:
    """Uses of a shared array are `addrspacecast (... @smem to ptr)` constants, or constant geps
    from one (`s[3]`); they become the parameter, or a gep from it at the function's entry."""
    made = {}
    for inst in list(fn.instructions()):
        for k, op in enumerate(inst.ops):
            if not isinstance(op, Constant) or "addrspace(3)" not in getattr(op, "text", ""):
                continue
            inst.ops[k] = _shared_value(fn, op.text, params, made, inst)


def _shared_value(fn, text, params, made, inst):
    # LLVM prints a constant expression nested in another without the space: "addrspacecast(".
    text = re.sub(r"addrspacecast\s*\(", "addrspacecast (", text)
    for symbol, param in params.items():
        if text == _CAST.format(symbol):
            return param
    m = _GEP.match(text)
    if m is None or m.group(2) not in params:
        raise UnsupportedError("a use of shared memory enzyme_py does not model", text,
                               hint="Index shared arrays with integers (s[i]).")
    if text not in made:
        source = _element(m.group(1))
        gep = Instruction("getelementptr", T.ptr, [params[m.group(2)], ConstInt(T.i64, int(m.group(3)))],
                          name=f"shared.at.{len(made)}", source_type=source)
        fn.entry.insert(0, gep)
        made[text] = gep
    return made[text]


def _lane(width, lane) -> str:
    """The suffix of a shadow's or tangent's name: none for one direction, else `.lane`."""
    return "" if width == 1 else f".{lane}"


def _finish(module, body, shared, activity, n_kernel, name, extra, wide=False,
            scratch=False, width=1) -> None:
    """Add the wrapper kernel around `<name>.body` (see the module docstring); `wide`: float32
    shared arrays have float64 shadows; `scratch`: a last parameter, the deterministic block
    sums' scratch memory; `width`: shadows per differentiated array. Returns GpuKernel.dynamic."""
    kernel_params = body.params[:n_kernel]
    dup_kernel = [k for k in range(n_kernel) if activity[k] == Activity.DUP]
    # the body's `noalias` (disjoint arrays) holds for the kernel's own parameters too
    grad = module.functions[f"{name}.body"]
    attrs = {p.name: p for p in grad.params}
    params = [f"{p.type} {_noalias(attrs.get(p.name))}%p{k}" for k, p in enumerate(kernel_params)]
    params += [f"ptr {_noalias(attrs.get(kernel_params[k].name + '.shadow'))}%shadow.{k}{_lane(width, l)}"
               for k in dup_kernel for l in range(width)]
    params += [f"{t} %{n}" for t, n in extra]
    globals_, lines = [], []
    if shared or scratch:
        lines.append(PIECES["thread_position"])
    prev = "entry"       # the block a shadow's zero loop comes from (an earlier piece's)
    if scratch:
        params.append("ptr %scratch")
        lines.append(PIECES["scratch"])
        prev = "scratch.done"
    body_args = [f"{p.type} %p{k}" for k, p in enumerate(kernel_params)]
    body_args += [f"ptr addrspacecast (ptr addrspace(3) @{s.symbol} to ptr)" for s in shared]
    body_args += ["i32 %dyn.size"] * len(_size_activity(shared))
    body_args += [f"ptr %shadow.{k}{_lane(width, l)}" for k in dup_kernel for l in range(width)]
    dynamic = None
    for s in shared:
        if s.count == 0:      # the primal's dynamic size, for the body (_dynamic_size_param)
            params.append("i64 %dyn.bytes")
            lines.append(PIECES["dynamic_size"])
            dynamic = (T.size_of(s.element), T.size_of(s.element), 0)
    for j, s in enumerate(shared):
        if activity[s.param] != Activity.DUP:
            continue
        primal_bytes = T.size_of(s.element)
        if wide and s.element == T.f32:
            s = SharedArray(s.symbol, T.f64, s.count, s.param)
        if s.count == 0:
            lines.append(fill(PIECES["dynamic_shadows"], SYMBOL=s.symbol, P=primal_bytes,
                              S=T.size_of(s.element)))
            dynamic = (primal_bytes, T.size_of(s.element), width)
        for lane in range(width):
            J = f"{j}{_lane(width, lane)}"
            if s.count == 0:
                lines.append(fill(PIECES["dynamic_lane"], L=lane))
                ptr, count = f"%dyn.shadow.{lane}", "%dyn.count"
            else:
                globals_.append(fill(PIECES["shared_shadow"], NAME=name, J=J, COUNT=s.count,
                                     ELEMENT=s.element, ALIGN=max(T.size_of(s.element), 8)))
                ptr = f'addrspacecast (ptr addrspace(3) @"{name}.shared.{J}" to ptr)'
                count = s.count
            lines.append(fill(PIECES["zero_loop"], J=J, PREV=prev, COUNT=count, ELEMENT=s.element,
                              PTR=ptr, ZERO="0.0" if isinstance(s.element, T.FloatType) else "0"))
            prev = f"zero.{J}.done"
            body_args.append(f"ptr {ptr}")
    if shared or scratch:
        lines.append(PIECES["barrier"])
    body_args += [f"{t} %{n}" for t, n in extra]
    merge(module, fill(PIECES["kernel"], GLOBALS="\n".join(globals_), NAME=name, PARAMS=", ".join(params),
                       LINES="\n".join(lines), BODY_ARGS=", ".join(body_args)) + "\n")
    return dynamic


def _noalias(param) -> str:
    return "noalias " if param is not None and "noalias" in param.attrs.split() else ""
