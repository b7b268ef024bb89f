"""Run a CUDA kernel's module on this CPU, threads and blocks emulated: a GPU-free check.

The module (a primal kernel as numba-cuda lowered it, or a generated gradient) is retargeted to
the host: `llvm.nvvm.read.ptx.sreg.*` reads become calls that return the emulated thread's
position, libdevice's `__nv_*` functions become the C library's, shared memory (address space 3)
becomes ordinary globals, the barrier a call into the harness, and the `ptx_kernel` a C function.
MCJIT compiles it; `launch` runs every thread of every block.

Without barriers the threads of a block run one after another (a valid schedule of a kernel
without data races). With barriers (`threads="os"`), each thread of a block is an OS thread and
the barrier is a `threading.Barrier`: slow, but it runs kernels that reduce in shared memory.
Shared memory is filled with NaN before each block, so a kernel (or a gradient) that reads it
before writing it shows.

This is for tests: it runs what ir_passes generated, not what the GPU runs (libdevice's
functions are the C library's, the NVPTX backend is not involved).
"""
from __future__ import annotations

import ctypes
import math
import re
import struct
import threading

import llvmlite.binding as llvm
import numpy as np
from numba.core import types

from ..bridge.verify import parse_checked

SREGS = [f"{r}.{a}" for r in ("tid", "ntid", "ctaid", "nctaid") for a in "xyz"] + ["laneid",
                                                                                    "warpsize"]
_SREG = re.compile(r"@llvm\.nvvm\.read\.ptx\.sreg\.([\w.]+)\(\)")
_BARRIER = re.compile(r"@llvm\.nvvm\.(?:barrier0|barrier\.cta\.sync\.aligned\.all|barrier\.sync|"
                      r"barrier\.cta\.sync\.aligned|barrier\.cta\.sync|barrier\.cta\.sync\.all)\b")
_FENCE = re.compile(r"call void @llvm\.nvvm\.membar\.\w+\(\)")
_CAST_CONST = re.compile(r"addrspacecast \(ptr addrspace\(3\) (@[\w.$\"]+) to ptr\)")
_CAST_INST = re.compile(r"= addrspacecast ptr addrspace\(3\) (@[\w.$\"]+) to ptr")
_NV = re.compile(r"@__nv_(\w+)\(")

# libdevice functions that are not named like the C library's: the body computing %r from the
# arguments, in type {T} ({S}: the C library's suffix, "" or "f"; {V}: the intrinsic suffix)
_WRAPPED = {
    "powi": ("{T} %x, i32 %n", "%f = sitofp i32 %n to {T}\n  %r = call {T} @pow{S}({T} %x, {T} %f)",
             "declare {T} @pow{S}({T}, {T})"),
    "rsqrt": ("{T} %x", "%s = call {T} @llvm.sqrt.{V}({T} %x)\n  %r = fdiv {T} 1.0, %s", ""),
    "rcbrt": ("{T} %x", "%s = call {T} @cbrt{S}({T} %x)\n  %r = fdiv {T} 1.0, %s",
              "declare {T} @cbrt{S}({T})"),
    "sinpi": ("{T} %x", "%a = fmul {T} %x, {PI}\n  %r = call {T} @sin{S}({T} %a)",
              "declare {T} @sin{S}({T})"),
    "cospi": ("{T} %x", "%a = fmul {T} %x, {PI}\n  %r = call {T} @cos{S}({T} %a)",
              "declare {T} @cos{S}({T})"),
    "normcdf": ("{T} %x", "%a = fmul {T} %x, {M}\n  %e = call {T} @erfc{S}({T} %a)\n"
                "  %r = fmul {T} %e, 0.5", "declare {T} @erfc{S}({T})"),
}


def _hex(value, t) -> str:
    """An LLVM float literal for value in type t (double, float)."""
    if t == "float":
        value = struct.unpack("f", struct.pack("f", value))[0]
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]


def _wrapper(name, t, suffix) -> str:
    params, body, decls = _WRAPPED[name]
    fill = dict(T=t, S=suffix, V="f32" if t == "float" else "f64", PI=_hex(math.pi, t),
                M=_hex(-math.sqrt(0.5), t))
    return (f"define internal {t} @__nv_{name}{suffix}({params.format(**fill)}) {{\n"
            f"  {body.format(**fill)}\n  ret {t} %r\n}}\n{decls.format(**fill)}\n")


HOST_WRAPPERS = {name + s: _wrapper(name, t, s) for name in _WRAPPED
                 for t, s in (("double", ""), ("float", "f"))}
HOST_WRAPPERS["fast_fdividef"] = ("define internal float @__nv_fast_fdividef(float %a, float %b) {\n"
                                  "  %r = fdiv float %a, %b\n  ret float %r\n}\n")
_C_NAMES = {"fast_sinf": "sinf", "fast_cosf": "cosf", "fast_tanf": "tanf", "fast_expf": "expf",
            "fast_logf": "logf", "fast_log2f": "log2f", "fast_log10f": "log10f",
            "fast_powf": "powf"}


def host_text(text: str) -> str:
    """The module retargeted to this CPU (see the module docstring)."""
    text = re.sub(r'^target (triple|datalayout) = .*$', "", text, flags=re.M)
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
    extra = ["declare i32 @enzpy_host_sreg(i32)", "declare void @enzpy_host_barrier()",
             "define internal void @enzpy.host.barrier(i32 %id) {\n  call void @enzpy_host_barrier()"
             "\n  ret void\n}"]
    for reg in sorted(used):
        if reg not in SREGS:
            raise NotImplementedError(f"the harness does not emulate %{reg}")
        extra.append(f"define internal i32 @enzpy.host.sreg.{reg}() {{\n  %v = call i32 "
                     f"@enzpy_host_sreg(i32 {SREGS.index(reg)})\n  ret i32 %v\n}}")
    text, warp = _warp_on_host(text)
    text = _libdevice_on_host(text)
    return text + "\n" + "\n".join(extra + warp) + "\n"


# Warp intrinsics of the warp-aggregated add (ir_passes/runtime/warp_add.py): threads run one at
# a time here, so no warp is ever full and each thread takes the helper's own-atomic path.
_WARP = {"activemask()": ("i32 @enzpy.host.activemask()", "ret i32 0"),
         "match.any.sync.i64(": ("i32 @enzpy.host.match(i32 %m, i64 %v)", "ret i32 0"),
         "shfl.sync.bfly.i32(": ("i32 @enzpy.host.shfl(i32 %m, i32 %v, i32 %o, i32 %c)",
                                 "ret i32 %v")}


def _warp_on_host(text: str) -> tuple:
    extra = []
    for call, (signature, body) in _WARP.items():
        if f"@llvm.nvvm.{call}" not in text:
            continue
        name = signature.split("@")[1].split("(")[0]
        text = re.sub(r"^declare [^\n]*@llvm\.nvvm\." + re.escape(call) + r"[^\n]*$", "", text,
                      flags=re.M)
        text = text.replace(f"@llvm.nvvm.{call}", f"@{name}" + ("()" if call.endswith(")") else "("))
        extra.append(f"define internal {signature} {{\n  {body}\n}}")
    return text, extra


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


class HostKernel:
    """Kernel `name` of module `text`, compiled for this CPU."""

    _engines: list = []

    def __init__(self, text: str, name: str):
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        self.position = _Position()
        self.barrier = None
        self._callbacks = (ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)(self._sreg),
                           ctypes.CFUNCTYPE(None)(self._barrier))
        llvm.add_symbol("enzpy_host_sreg", ctypes.cast(self._callbacks[0], ctypes.c_void_p).value)
        llvm.add_symbol("enzpy_host_barrier", ctypes.cast(self._callbacks[1], ctypes.c_void_p).value)
        self.text = host_text(text)
        self.has_barrier = "@enzpy.host.barrier(" in self.text.split("define internal void @enzpy.host.barrier")[0]
        module = parse_checked(self.text)
        module.triple = llvm.get_process_triple()
        fn = module.get_function(name)
        self.param_types = [str(a.type) for a in fn.arguments]
        self.sizes = {g.name: _bytes(g) for g in module.global_variables
                      if re.search(r"_cudapy_smem|\.shared\.|block_sum\.buffer", g.name)}
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

    def launch(self, griddim, blockdim, params, threads="auto") -> None:
        """Run every thread; `params` are the kernel's LLVM parameters as Python numbers
        (pointers as integers). `threads`: "sequential", "os" (a thread per GPU thread), or
        "auto" (os when the module has a barrier)."""
        if threads == "auto":
            threads = "os" if self.has_barrier else "sequential"
        grid, block = _dim3(griddim), _dim3(blockdim)
        args = [_CTYPES[t](v) for t, v in zip(self.param_types, params)]
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    self._poison_shared()
                    ctaid = (bx, by, bz)
                    positions = [(tx, ty, tz) for tz in range(block[2]) for ty in range(block[1])
                                 for tx in range(block[0])]
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

        def run(tid):
            try:
                self._set(tid, ctaid, grid, block)
                self.fn(*args)
            except BaseException as exc:     # noqa: BLE001 - reported after the join
                errors.append(exc)
                self.barrier.abort()

        ts = [threading.Thread(target=run, args=(tid,)) for tid in positions]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
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
    return int(m.group(1)) * {"double": 8, "float": 4, "i64": 8, "i32": 4, "i16": 2}.get(m.group(2), 8)


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
