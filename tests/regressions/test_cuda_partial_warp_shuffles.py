"""In a block whose size is not a multiple of 32 the last warp is partial. A shuffle up, or a
broadcast from lane 0, reads only lanes that exist there, but their adjoints read the others:
the lane m = l + b that read from lane l (a shuffle down), every lane of the member mask (the
butterfly sum of a broadcast's adjoints). A missing lane's value is undefined (NaN bits in the
CPU harness), so the gradient was garbage where the primal was well defined. The adjoint helpers
now leave out the lanes past the block's end (runtime/warp_shuffle.py). The GPU-free check (case
warp_partial, 48 threads): ptxas accepts both modes, the harness matches finite differences."""
import pytest

from test_cuda_codegen import HAVE_CUDA_EXTRA, run_check

pytestmark = pytest.mark.skipif(not HAVE_CUDA_EXTRA, reason="needs the cuda extra")


def test_shuffles_in_a_partial_warp():
    report = run_check("warp_partial")
    for mode in ("Reverse", "Forward"):
        entry = report[mode]
        assert entry["ptxas_sm_80"][0] == 0 and entry["ptxas_sm_90"][0] == 0, entry
        assert entry["errors"] and max(entry["errors"].values()) < 1e-6, entry
