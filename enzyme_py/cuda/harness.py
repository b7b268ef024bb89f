"""Run a CUDA kernel's module on this CPU, threads and blocks emulated: a GPU-free check.

The module (a primal kernel as numba-cuda lowered it, or a generated gradient) is retargeted to
the host: `llvm.nvvm.read.ptx.sreg.*` reads become calls that return the emulated thread's
position, libdevice's `__nv_*` functions become the C library's, shared memory (address space 3)
becomes ordinary globals, the barrier a call into the harness, and the `ptx_kernel` a C function.
MCJIT compiles it; `launch` runs every thread of every block.
Warp shuffles and `syncwarp` are calls into the harness too: the lanes of a warp meet there
(`Warp`), as they do in lockstep on the GPU, and each reads its source lane's value.

Without barriers the threads of a block run one after another (a valid schedule of a kernel
without data races). With barriers, shuffles or `syncwarp` (`threads="os"`), each thread of a block is an OS thread and
the barrier is a `threading.Barrier`: slow, but it runs kernels that reduce in shared memory.
Shared memory is filled with NaN before each block, so a kernel (or a gradient) that reads it
before writing it shows.

This is for tests: it runs what ir_passes generated, not what the GPU runs (libdevice's
functions are the C library's, the NVPTX backend is not involved).
"""
from __future__ import annotations

import ctypes
import re
import threading

import llvmlite.binding as llvm
import numpy as np
from numba.core import types

from ..bridge.verify import parse_checked
from . import host_ir

SREGS = [f"{r}.{a}" for r in ("tid", "ntid", "ctaid", "nctaid") for a in "xyz"] + ["laneid",
                                                                                    "warpsize"]
_SREG = re.compile(r"@llvm\.nvvm\.read\.ptx\.sreg\.([\w.]+)\(\)")
_BARRIER = re.compile(r"@llvm\.nvvm\.(?:barrier0|barrier\.cta\.sync\.aligned\.all|barrier\.sync|"
                      r"barrier\.cta\.sync\.aligned|barrier\.cta\.sync|barrier\.cta\.sync\.all)\b")
_FENCE = re.compile(r"call void @llvm\.nvvm\.membar\.\w+\(\)")
_CAST_CONST = re.compile(r"addrspacecast \(ptr addrspace\(3\) (@[\w.$\"]+) to ptr\)")
_CAST_INST = re.compile(r"= addrspacecast ptr addrspace\(3\) (@[\w.$\"]+) to ptr")
_NV = re.compile(r"@__nv_(\w+)\(")

# libdevice functions that are not named like the C library's, through the C library (harness.ll)
HOST_WRAPPERS = {name + s: host_ir.libdevice(name, t, s) for name in host_ir.LIBDEVICE
                 for t, s in (("double", ""), ("float", "f"))}
HOST_WRAPPERS["fast_fdividef"] = host_ir.PIECES["fast_fdividef"] + "\n"
_C_NAMES = {"fast_sinf": "sinf", "fast_cosf": "cosf", "fast_tanf": "tanf", "fast_expf": "expf",
            "fast_logf": "logf", "fast_log2f": "log2f", "fast_log10f": "log10f",
            "fast_powf": "powf"}


# numba-cuda reads the dynamic shared size for a dynamic array's shape (inline asm)
_DYNAMIC_SIZE = re.compile(r'= (?:tail )?call i32 asm sideeffect "mov\.u32 \$0, %dynamic_smem_size;", "=r"\(\)[^\n]*')
_DYNAMIC = re.compile(r"^(@\S+) = external [^\n]*addrspace\(3\) global \[0 x \w+\][^\n]*$", re.M)


def host_text(text: str, dynamic_shared: int = 0) -> str:
    """The module retargeted to this CPU (see the module docstring); the launch's dynamic shared
    memory (`cuda.shared.array(0, ...)`) is a global of `dynamic_shared` bytes."""
    text = re.sub(r'^target (triple|datalayout) = .*$', "", text, flags=re.M)
    text = _DYNAMIC.sub(lambda m: f"{m.group(1)} = internal addrspace(3) global "
                        f"[{max(dynamic_shared, 1)} x i8] zeroinitializer, align 16", text)
    text = _DYNAMIC_SIZE.sub(f"= add i32 {dynamic_shared}, 0", text)
    text = text.replace("ptx_kernel ", "")
    text = _SREG.sub(lambda m: f"@enzpy.host.sreg.{m.group(1)}()", text)
    text = _BARRIER.sub("@enzpy.host.barrier", text)
    text = _FENCE.sub("fence seq_cst", text)
    text = _CAST_CONST.sub(r"\1", text)
    text = _CAST_INST.sub(r"= getelementptr i8, ptr \1, i64 0", text)
    text = text.replace("addrspace(3) ", "")
    if "addrspace(" in text:
        raise NotImplementedError("the harness handles generic and shared (3) address spaces only")
    used = set(re.findall(r"@enzpy\.host\.sreg\.([\w.]+)\(\)", text))
    text = re.sub(r"^declare [^\n]*@enzpy\.host\.sreg\.[\w.]+\(\)[^\n]*$", "", text, flags=re.M)
    text = re.sub(r"^declare [^\n]*@enzpy\.host\.barrier\([^\n]*$", "", text, flags=re.M)
    extra = [host_ir.PIECES["barrier"]]
    for reg in sorted(used):
        if reg not in SREGS:
            raise NotImplementedError(f"the harness does not emulate %{reg}")
        extra.append(host_ir.sreg(reg, SREGS.index(reg)))
    text, warp = _warp_on_host(text)
    text = _libdevice_on_host(text)
    return text + "\n" + "\n".join(extra + warp) + "\n"


# Warp intrinsics of the warp-aggregated add (ir_passes/runtime/warp_add.py): the harness does not
# know which lanes are converged, so no warp is ever full and each thread takes the helper's
# own-atomic path (harness.ll's pieces of these names).
_WARP = {"activemask()": "activemask", "match.any.sync.i64(": "match"}
_SHUFFLE = re.compile(r"@llvm\.nvvm\.shfl\.sync\.(idx|up|down|bfly)\.(i32p|i32|f32)\(")
_SHUFFLE_DECL = re.compile(r"^declare [^\n]*@llvm\.nvvm\.(shfl\.sync\.\w+\.\w+|bar\.warp\.sync)\("
                           r"[^\n]*$", re.M)
MODES = ("idx", "up", "down", "bfly", "sync")
def _warp_on_host(text: str) -> tuple:
    """Warp intrinsics as calls into the harness: shuffles and `bar.warp.sync` exchange values
    between the lanes of a warp (`Warp`)."""
    extra = []
    for call, piece in _WARP.items():
        if f"@llvm.nvvm.{call}" not in text:
            continue
        text = re.sub(r"^declare [^\n]*@llvm\.nvvm\." + re.escape(call) + r"[^\n]*$", "", text,
                      flags=re.M)
        text = text.replace(f"@llvm.nvvm.{call}",
                            f"@enzpy.host.{piece}" + ("()" if call.endswith(")") else "("))
        extra.append(host_ir.PIECES[piece])
    used = sorted(set(_SHUFFLE.findall(text)))
    if not used and "@llvm.nvvm.bar.warp.sync(" not in text:
        return text, extra
    text = _SHUFFLE_DECL.sub("", text)
    text = _SHUFFLE.sub(r"@enzpy.host.shfl.\1.\2(", text)
    text = text.replace("@llvm.nvvm.bar.warp.sync(", "@enzpy.host.warpsync(")
    extra.append(host_ir.PIECES["warpsync"])
    extra += [host_ir.shuffle(mode, ty, MODES.index(mode)) for mode, ty in used]
    return text, extra


def shuffle_source(mode: int, lane: int, b: int, c: int) -> tuple:
    """(source lane, in range) of `shfl.sync` in `lane` (PTX ISA; runtime/warp_shuffle.py)."""
    seg = (c >> 8) & 31
    low = lane & seg
    top = low | (c & 31 & ~seg)
    b &= 31
    j = {0: low | (b & ~seg), 1: lane - b, 2: lane + b, 3: lane ^ b}[mode]
    ok = j >= top if mode == 1 else j <= top
    return (j, True) if ok else (lane, False)


class Warp:
    """The lanes of one warp, for shuffles and `syncwarp`: each call waits until every live lane of
    its member mask has arrived with the same mask (exited lanes are not waited for), then
    every lane reads what it needs. A lane that reads a lane not taking part gets NaN bits."""

    def __init__(self, lanes):
        self.alive = set(lanes)
        self.cond = threading.Condition()
        self.open = {}      # mask -> {lane: value} of the exchange being gathered

    def exchange(self, lane, mask, value) -> dict:
        with self.cond:
            values = self.open.setdefault(mask, {})
            values[lane] = value
            self._release(mask)
            if not self.cond.wait_for(lambda: self.open.get(mask) is not values, timeout=60):
                raise RuntimeError(f"lanes of warp mask {mask:#x} never reached the shuffle")
            return values

    def leave(self, lane) -> None:
        with self.cond:
            self.alive.discard(lane)
            for mask in list(self.open):
                self._release(mask)

    def _release(self, mask) -> None:
        values = self.open[mask]
        if all(k in values for k in self.alive if mask >> k & 1):
            del self.open[mask]
            self.cond.notify_all()


def _libdevice_on_host(text: str) -> str:
    """`__nv_sin` -> the C library's `sin` (declarations renamed, calls follow)."""
    names = set(_NV.findall(text))
    wrappers = []
    for name in sorted(names):
        if name in HOST_WRAPPERS:
            text = re.sub(rf"^declare [^\n]*@__nv_{name}\([^\n]*$", "", text, flags=re.M)
            wrappers.append(HOST_WRAPPERS[name])
            continue
        c = _C_NAMES.get(name, name)
        text = re.sub(rf"@__nv_{name}\(", f"@{c}(", text)
    for w in wrappers:
        for decl in re.findall(r"^declare .*$", w, flags=re.M):
            fn = re.search(r"@(\w+)\(", decl).group(1)
            if re.search(rf"^declare [^\n]*@{fn}\(", text, flags=re.M):
                w = w.replace(decl, "")
        text += "\n" + w
    return text


class _Position(threading.local):
    regs = (0,) * len(SREGS)
    warp = None


class HostKernel:
    """Kernel `name` of module `text`, compiled for this CPU; `dynamic_shared`: the bytes of
    dynamic shared memory of the launches."""

    _engines: list = []

    def __init__(self, text: str, name: str, dynamic_shared: int = 0):
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        self.position = _Position()
        self.barrier = None
        self.failures = []      # exceptions raised in a shuffle, reported after the block
        i32 = ctypes.c_int32
        self._callbacks = (ctypes.CFUNCTYPE(i32, i32)(self._sreg),
                           ctypes.CFUNCTYPE(None)(self._barrier),
                           ctypes.CFUNCTYPE(i32, i32, ctypes.c_uint32, ctypes.c_uint32, i32, i32,
                                            ctypes.c_void_p)(self._shuffle))
        for symbol, cb in zip(("sreg", "barrier", "shfl"), self._callbacks):
            llvm.add_symbol(f"enzpy_host_{symbol}", ctypes.cast(cb, ctypes.c_void_p).value)
        self.text = host_text(text, dynamic_shared)
        own = self.text.split("define internal void @enzpy.host.barrier")[0]
        # barriers, shuffles and `syncwarp` need the threads of a block at once
        self.has_barrier = "@enzpy.host.barrier(" in own or "@enzpy_host_shfl(" in self.text
        module = parse_checked(self.text)
        module.triple = llvm.get_process_triple()
        fn = module.get_function(name)
        self.param_types = [str(a.type) for a in fn.arguments]
        self.sizes = {g.name: _bytes(g) for g in module.global_variables
                      if re.search(r"_cudapy_smem|\.shared\.|block_sum\.", g.name)}
        tm = llvm.Target.from_default_triple().create_target_machine()
        self.engine = llvm.create_mcjit_compiler(module, tm)
        self.engine.finalize_object()
        HostKernel._engines.append(self)     # callbacks and code live as long as the process
        ctypes_args = [_CTYPES[t] for t in self.param_types]
        self.fn = ctypes.CFUNCTYPE(None, *ctypes_args)(self.engine.get_function_address(name))

    def _sreg(self, code):
        return self.position.regs[code]

    def _barrier(self):
        self.barrier.wait()

    def _shuffle(self, mode, mask, value, b, c, pred):
        try:
            return self._exchange(mode, mask, value, b, c, pred)
        except BaseException as exc:     # noqa: BLE001 - ctypes drops a callback's exception
            self.failures.append(exc)
            return 0

    def _exchange(self, mode, mask, value, b, c, pred):
        lane = self.position.regs[SREGS.index("laneid")]
        values = self.position.warp.exchange(lane, mask, value)
        if MODES[mode] == "sync":
            return 0
        src, ok = shuffle_source(mode, lane, b, c)
        if pred:
            ctypes.c_uint8.from_address(pred).value = int(ok)
        got = values.get(src, 0xFFFFFFFF)       # a lane not taking part: NaN bits
        return got - (1 << 32) if got >= 1 << 31 else got

    def launch(self, griddim, blockdim, params, threads="auto", reverse_blocks=False) -> None:
        """Run every thread; `params` are the kernel's LLVM parameters as Python numbers
        (pointers as integers). `threads`: "sequential", "os" (a thread per GPU thread), or
        "auto" (os when the module has a barrier). The blocks run one after another, the last
        one first with `reverse_blocks`."""
        if threads == "auto":
            threads = "os" if self.has_barrier else "sequential"
        grid, block = _dim3(griddim), _dim3(blockdim)
        args = [_CTYPES[t](v) for t, v in zip(self.param_types, params)]
        blocks = [(bx, by, bz) for bz in range(grid[2]) for by in range(grid[1])
                  for bx in range(grid[0])]
        positions = [(tx, ty, tz) for tz in range(block[2]) for ty in range(block[1])
                     for tx in range(block[0])]
        for ctaid in reversed(blocks) if reverse_blocks else blocks:
            self._poison_shared()
            if threads == "os":
                self._block_threads(positions, ctaid, grid, block, args)
            else:
                for tid in positions:
                    self._set(tid, ctaid, grid, block)
                    self.fn(*args)

    def _set(self, tid, ctaid, grid, block) -> None:
        lin = tid[0] + block[0] * (tid[1] + block[1] * tid[2])
        self.position.regs = (*tid, *block, *ctaid, *grid, lin % 32, 32)

    def _block_threads(self, positions, ctaid, grid, block, args) -> None:
        self.barrier = threading.Barrier(len(positions), timeout=60)
        errors = []
        count = len(positions)
        warps = [Warp(range(min(32, count - 32 * w))) for w in range((count + 31) // 32)]

        def run(k, tid):
            try:
                self._set(tid, ctaid, grid, block)
                self.position.warp = warps[k // 32]
                self.fn(*args)
            except BaseException as exc:     # noqa: BLE001 - reported after the join
                errors.append(exc)
                self.barrier.abort()
            finally:
                warps[k // 32].leave(k % 32)

        ts = [threading.Thread(target=run, args=(k, tid)) for k, tid in enumerate(positions)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        errors += self.failures
        self.failures = []
        if errors:
            raise errors[0]

    def _poison_shared(self) -> None:
        for name, size in self.sizes.items():
            addr = self.engine.get_global_value_address(name)
            ctypes.memmove(addr, np.full(size // 8 + 1, np.nan).ctypes.data, size)


_CTYPES = {"ptr": ctypes.c_void_p, "i64": ctypes.c_int64, "i32": ctypes.c_int32,
           "i16": ctypes.c_int16, "i8": ctypes.c_int8, "i1": ctypes.c_bool,
           "double": ctypes.c_double, "float": ctypes.c_float}


def _bytes(g) -> int:
    m = re.search(r"\[(\d+) x (\w+)\]", str(g.global_value_type))
    return int(m.group(1)) * {"double": 8, "float": 4, "i64": 8, "i32": 4, "i16": 2,
                              "i8": 1}.get(m.group(2), 8)


def _dim3(d) -> tuple:
    if isinstance(d, int):
        return (d, 1, 1)
    d = tuple(d) + (1, 1)
    return d[:3]


def kernel_params(argtypes, values) -> list:
    """The LLVM parameters numba-cuda passes for these arguments (host arrays by address)."""
    out = []
    for ty, v in zip(argtypes, values):
        if isinstance(ty, types.Array):
            out += [0, 0, v.size, v.itemsize, v.ctypes.data, *v.shape, *v.strides]
        elif isinstance(ty, types.Boolean):
            out.append(int(bool(v)))
        else:
            out.append(v)
    return out
