"""Rules for NVPTX (CUDA) intrinsics: thread and block indices, barriers, fences.

Index reads (`llvm.nvvm.read.ptx.sreg.tid.x` and the rest) carry no derivative. A block barrier
(`cuda.syncthreads()`, `llvm.nvvm.barrier0`, upgraded by LLVM 22 to
`llvm.nvvm.barrier.cta.sync.aligned.all`) is mirrored: the reverse sweep of the code after it must
finish in every thread before the reverse of the code before it starts, so the reverse of a
barrier is a barrier (registry.py, `mirrored`). Memory fences (`cuda.threadfence()`) likewise; `cuda.syncwarp()`
(`llvm.nvvm.bar.warp.sync`) is a barrier of the warp, mirrored the same way. Warp shuffles: below.
"""
from ..ir.values import ConstInt
from ..runtime.warp_shuffle import adjoint_name, shuffle_name
from .registry import cross_lane, inactive, mirrored

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

# Warp shuffles (`cuda.shfl_*_sync`). LLVM's `llvm.nvvm.shfl.sync.<mode>.<i32|i32p|f32>` and, for
# float64, `enzpy.shfl.sync.<mode>.f64` (two 32-bit shuffles, runtime/warp_shuffle.py: the
# transform float-shuffles makes both of the integer shuffles a float's bits go through). Lane l
# receives the operand of its source lane, so the adjoint of the operand in lane l is the sum of
# the result adjoints of the lanes that read from l (and l's own, when its source was out of
# range); the tangent is shuffled like the value. Integer shuffles carry no derivative.
SHUFFLE_MODES = ("idx", "up", "down", "bfly")


class Shuffle:
    """Reverse and tangent code of a float shuffle `(mask, value, b, c)` in mode `mode`."""

    def __init__(self, mode):
        self.mode = mode

    def reverse(self, g, inst, block, b) -> None:
        if not g.is_active(inst):
            return
        d = g.take_adjoint(b, inst)
        value = inst.ops[1]
        if not g.is_active(value):
            return
        if self.broadcast(inst):     # every lane of the warp reads lane b
            name = adjoint_name("bcast", value.type.suffix)
            g.add_adjoint(b, value, b.call(name, value.type, [d, inst.ops[2]]))
            return
        mask, lane, clamp = (g.primal_at(inst.ops[k], block, b) for k in (0, 2, 3))
        name = adjoint_name(self.mode, value.type.suffix)
        g.add_adjoint(b, value, b.call(name, value.type, [mask, d, lane, clamp]))

    def broadcast(self, inst) -> bool:
        mask, lane, clamp = (inst.ops[k] for k in (0, 2, 3))
        return self.mode == "idx" and all(isinstance(v, ConstInt) for v in (mask, lane, clamp)) \
            and mask.value & 0xFFFFFFFF == 0xFFFFFFFF and clamp.value == 31

    def tangent(self, fm, inst) -> None:
        fm.emit_primal(inst)
        ts = fm.tan(inst.ops[1]) if inst.type.is_float and fm.varying(inst) else None
        if not ts:
            return
        mask, lane, clamp = (fm.val(inst.ops[k]) for k in (0, 2, 3))
        fm.set_tangent(inst, [fm.b.call(inst.callee_name, inst.type, [mask, t, lane, clamp])
                              for t in ts])


for _mode in SHUFFLE_MODES:
    cross_lane(f"llvm.nvvm.shfl.sync.{_mode}", Shuffle(_mode),
               spellings=(shuffle_name(_mode, "f64"),))
    inactive(f"llvm.nvvm.shfl.sync.{_mode}.i32p")
for _name in ("llvm.nvvm.activemask", "llvm.nvvm.vote.all.sync", "llvm.nvvm.vote.any.sync",
              "llvm.nvvm.vote.uni.sync", "llvm.nvvm.vote.ballot.sync", "llvm.nvvm.match.any.sync",
              "llvm.nvvm.match.all.sync"):
    inactive(_name)
