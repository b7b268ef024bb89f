"""Clean a captured kernel into compact SSA with LLVM's passes for the NVPTX target.

As on the CPU (enzyme_py/cleanup.py): device functions are marked `alwaysinline` and made
internal, then LLVM's O2 module pipeline runs without vectorization, unrolling or interleaving
(O1 when O2 leaves irreducible control flow). The target machine is NVPTX's for the kernel's
compute capability, so the cost models are the GPU's.

numba-cuda lowers `cuda.shfl_*_sync` to libNVVM's `llvm.nvvm.shfl.sync.i32(mask, mode, a, b, c)`,
which LLVM 22 does not know (an opaque call, not even `convergent`): before the passes it becomes
LLVM's intrinsic for its mode, `llvm.nvvm.shfl.sync.<idx|up|down|bfly>.i32p(mask, a, b, c)`,
which returns the same `{i32, i1}`.
"""
from __future__ import annotations

import re
from pathlib import Path

import llvmlite.binding as llvm

from ir_passes import UnsupportedError, fill_template, read_pieces

from ..bridge.optimize import DEBUG_RECORD, inline_and_optimize, o2_or_o1
from ..timings import stage

_NVVM_SHFL = re.compile(r"@llvm\.nvvm\.shfl\.sync\.i32\((i32 [^,]+), i32 ([^,]+), ")
_NVVM_SHFL_DECL = re.compile(r"^declare [^\n]*@llvm\.nvvm\.shfl\.sync\.i32\([^\n]*$", re.M)
SHUFFLE_MODES = ("idx", "up", "down", "bfly")     # libNVVM's mode operand, 0 to 3
PIECES = read_pieces(Path(__file__).with_suffix(".ll"))


def target_machine(cc, opt=2):
    """LLVM's NVPTX target machine for compute capability `cc` (a (major, minor) pair)."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple("nvptx64-nvidia-cuda")
    return target.create_target_machine(cpu=f"sm_{cc[0]}{cc[1]}", opt=opt)


@stage("cleanup")
def cleanup(text: str, fn_name: str, cc) -> str:
    """`text` with the device functions inlined into kernel `fn_name`, after O2 (or O1)."""
    return o2_or_o1(lambda level: _clean(text, fn_name, cc, level))


def nvvm_shuffles(text: str) -> str:
    """libNVVM's shuffles as LLVM's (see the module docstring)."""
    if "@llvm.nvvm.shfl.sync.i32(" not in text:
        return text
    used = set()

    def rename(m):
        if not m.group(2).isdigit() or int(m.group(2)) >= len(SHUFFLE_MODES):
            raise UnsupportedError("a warp shuffle whose mode is not a constant", m.group(0))
        mode = SHUFFLE_MODES[int(m.group(2))]
        used.add(mode)
        return f"@llvm.nvvm.shfl.sync.{mode}.i32p({m.group(1)}, "
    text = _NVVM_SHFL_DECL.sub("", _NVVM_SHFL.sub(rename, text))
    return text + "".join("\n" + fill_template(PIECES["shuffle"], MODE=m) for m in sorted(used)) + "\n"


def _clean(text, fn_name, cc, level) -> str:
    module = llvm.parse_assembly(nvvm_shuffles(text))
    inline_and_optimize(module, fn_name, target_machine(cc), level)
    return DEBUG_RECORD.sub("", str(module))

