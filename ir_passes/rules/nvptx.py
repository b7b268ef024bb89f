"""Rules for NVPTX (CUDA) intrinsics: thread and block indices, barriers, fences.

Index reads (`llvm.nvvm.read.ptx.sreg.tid.x` and the rest) carry no derivative. A block barrier
(`cuda.syncthreads()`, `llvm.nvvm.barrier0`, upgraded by LLVM 22 to
`llvm.nvvm.barrier.cta.sync.aligned.all`) is mirrored: the reverse sweep of the code after it must
finish in every thread before the reverse of the code before it starts, so the reverse of a
barrier is a barrier (registry.py, `mirrored`). Memory fences (`cuda.threadfence()`) likewise.
"""
from .registry import inactive, mirrored

SREGS = ("tid", "ntid", "ctaid", "nctaid")
for _reg in SREGS:
    for _axis in "xyz":
        inactive(f"llvm.nvvm.read.ptx.sreg.{_reg}.{_axis}")
for _reg in ("laneid", "warpid", "nwarpid", "smid", "nsmid", "gridid", "clock", "clock64",
             "globaltimer", "lanemask.eq", "lanemask.lt", "lanemask.le", "lanemask.gt",
             "lanemask.ge", "warpsize"):
    inactive(f"llvm.nvvm.read.ptx.sreg.{_reg}")

BARRIERS = ("llvm.nvvm.barrier0", "llvm.nvvm.barrier.cta.sync.aligned.all",
            "llvm.nvvm.barrier.cta.sync.aligned", "llvm.nvvm.barrier.cta.sync.all",
            "llvm.nvvm.barrier.cta.sync", "llvm.nvvm.barrier.sync", "llvm.nvvm.barrier",
            "llvm.nvvm.bar.warp.sync", "llvm.nvvm.membar.cta", "llvm.nvvm.membar.gl",
            "llvm.nvvm.membar.sys", "llvm.nvvm.fence.sc.cluster")
for _name in BARRIERS:
    mirrored(_name)
