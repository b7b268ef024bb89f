"""A block sum through warp shuffles (`cuda.shfl_down_sync`, the common pattern of public
numba-cuda code) could not be checked or compiled: numba-cuda's libNVVM shuffle
`llvm.nvvm.shfl.sync.i32(mask, mode, ...)` is unknown to LLVM 22 (ptxas rejected even the plain
kernel's PTX, the CPU harness segfaulted), and a float64 goes through it as two 32-bit halves,
whose integer chain lost the derivative: forward mode refused `trunc`, reverse mode built a
gradient that silently missed every shuffled term. The shuffles are now LLVM's intrinsics
(cuda/cleanup.py), a float's halves one float shuffle (prepare/float_shuffles.py) whose reverse
shuffles the adjoint back (rules/nvptx.py), and the harness runs a warp's lanes together. The
GPU-free check (case warp_block_sum): ptxas accepts both modes, the harness matches central
finite differences."""
import pytest

from test_cuda_codegen import HAVE_CUDA_EXTRA, run_check

pytestmark = pytest.mark.skipif(not HAVE_CUDA_EXTRA, reason="needs the cuda extra")


def test_block_sum_through_warp_shuffles():
    report = run_check("warp_block_sum")
    for mode in ("Reverse", "Forward"):
        entry = report[mode]
        assert entry["ptxas_sm_80"][0] == 0 and entry["ptxas_sm_90"][0] == 0, entry
        assert entry["errors"] and max(entry["errors"].values()) < 1e-6, entry
