"""PTX from a generated module: LLVM's own NVPTX backend, with libdevice linked.

libNVVM cannot read LLVM 22's IR for sm_80/sm_90 (docs/cuda.md), so the module is compiled by
the NVPTX backend inside llvmlite: libdevice's bitcode is linked in, every function but the
kernel is made internal, O3 runs (NVVMReflect resolves libdevice's `__nvvm_reflect` queries),
and the target machine prints PTX. Two backend failures abort the process instead of raising
(LLVM is built with assertions): selecting an intrinsic the target has no instruction for
(`llvm.sin.f64`) and internalizing a `ptx_kernel` function. `ptx` checks for both first and
raises UnsupportedError.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

import llvmlite.binding as llvm
from numba.cuda.cudadrv.libs import get_libdevice

from ir_passes import (LIBDEVICE_SELECTED, ParseError, UnsupportedError, issue_loads_early, parse_module,
                       print_module, reducible)

from ..bridge.verify import parse_checked
from ..timings import stage
from .cleanup import target_machine

# A call of an LLVM float intrinsic: the backend selects those in libdevice.SELECTED; any other
# `llvm.<math>.f32/f64` aborts it
_CALLED_FLOAT_INTRINSIC = re.compile(r"\bcall [^@\n]*@llvm\.(\w+)\.(f32|f64)(?:\.i\d+)?\(")
_KERNEL = re.compile(r"^define [^@\n]*ptx_kernel [^@\n]*@(\"[^\"]+\"|[\w.$]+)\(", re.M)


@stage("codegen")
def ptx(text: str, kernel: str, cc) -> str:
    """PTX for kernel `kernel` of module `text`, for compute capability `cc` (major, minor)."""
    for m in _KERNEL.finditer(text):
        if m.group(1).strip('"') != kernel:
            raise UnsupportedError(f"the module has a second kernel, `{m.group(1)}`")
    _check_selectable(text)
    module = parse_checked(text)
    tm = target_machine(cc, opt=3)
    module.triple = "nvptx64-nvidia-cuda"
    module.data_layout = str(tm.target_data)
    libdevice = llvm.parse_bitcode(_libdevice_bitcode())
    libdevice.triple = module.triple
    libdevice.data_layout = module.data_layout
    module.link_in(libdevice)
    for fn in module.functions:
        if fn.is_declaration or fn.name == kernel:
            continue
        fn.linkage = llvm.Linkage.internal
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(module, pb)
    module = parse_checked(early_loads(str(module), kernel))
    return tm.emit_assembly(module)


def early_loads(text: str, kernel: str) -> str:
    """The optimised module with the kernel's loads issued early
    (ir_passes/transforms/common/early_loads.py). Only the kernel is parsed: the other functions
    (libdevice's, some with inline assembly, which ir_passes does not model) are declared in
    its place, with their attributes. A kernel with inline assembly, or with instructions the
    parser does not model (an atomic on a constant expression), is left as it is."""
    chunks = _definitions(text)
    own = [c for c in chunks if _KERNEL.match(c) and _KERNEL.match(c).group(1).strip('"') == kernel]
    if len(own) != 1 or " asm " in own[0]:
        return text
    rest = text
    for c in chunks:
        rest = rest.replace(c, "" if c is own[0] else _as_declaration(c))
    try:
        parsed = parse_module(rest + "\n" + own[0])
    except ParseError:             # optimised IR that ir_passes does not model: left as it is
        return text
    if not reducible(parsed):      # O3's jump threading may merge a loop's exits into another
        return text                # loop (a Newton loop's early break): no loop info, left as it is
    if issue_loads_early(parsed, parsed.functions[kernel]) == 0:
        return text
    printed = [c for c in _definitions(print_module(parsed)) if _KERNEL.match(c)]
    return text.replace(own[0], printed[0])


_DEFINE = re.compile(r"^define .*?\{$.*?^\}$", re.M | re.S)


def _definitions(text: str) -> list:
    return _DEFINE.findall(text)


def _as_declaration(chunk: str) -> str:
    header = chunk.split("\n", 1)[0].rstrip(" {")
    header = re.sub(r"^define (?:(?:internal|private|linkonce_odr|weak_odr|dso_local) )*", "declare ",
                    header)
    return header


def _check_selectable(text) -> None:
    for m in _CALLED_FLOAT_INTRINSIC.finditer(text):
        if m.group(1) not in LIBDEVICE_SELECTED and m.group(1) not in ("fmuladd", "fma"):
            raise UnsupportedError(f"`llvm.{m.group(1)}.{m.group(2)}` cannot be compiled for the "
                                   "GPU (the NVPTX backend has no instruction for it)")


_BITCODE = {}


def _libdevice_bitcode() -> bytes:
    if "bc" not in _BITCODE:
        with open(get_libdevice(), "rb") as f:
            _BITCODE["bc"] = f.read()
    return _BITCODE["bc"]


def ptxas_path() -> str | None:
    """`ptxas` from the nvidia-cuda-nvcc wheel (or the CUDA toolkit on PATH), or None."""
    try:
        import nvidia.cuda_nvcc as nvcc
        for base in nvcc.__path__:
            path = os.path.join(base, "bin", "ptxas")
            if os.path.exists(path):
                return path
    except ImportError:
        pass
    return shutil.which("ptxas")


def ptxas(ptx_text: str, arch: str) -> tuple[int, str]:
    """Assemble PTX for `arch` (`sm_80`) with ptxas: (return code, its messages)."""
    path = ptxas_path()
    if path is None:
        raise FileNotFoundError("ptxas not found: pip install nvidia-cuda-nvcc-cu12")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx_text)
        r = subprocess.run([path, f"-arch={arch}", "-o", os.path.join(tmp, "k.cubin"), src],
                           capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr
