"""A per-thread Newton solve that leaves its loop on convergence (Kepler's equation, `if abs(f) <
tol: break`) built in both modes, but making PTX died with "irreducible control flow": after O3
(jump threading may merge a loop's exits into another loop) the kernel's control flow is
irreducible, and the pass that issues loads early (codegen.early_loads) asked for loop info. The
pass is an optimisation: it now leaves an irreducible kernel as it is. The GPU-free check (case
kepler): ptxas accepts both modes, the CPU harness matches central finite differences."""
import pytest

from test_cuda_codegen import HAVE_CUDA_EXTRA, run_check

pytestmark = pytest.mark.skipif(not HAVE_CUDA_EXTRA, reason="needs the cuda extra")


def test_newton_loop_with_early_exit():
    report = run_check("kepler")
    for mode in ("Reverse", "Forward"):
        entry = report[mode]
        assert entry["ptxas_sm_80"][0] == 0 and entry["ptxas_sm_90"][0] == 0, entry
        assert entry["errors"] and max(entry["errors"].values()) < 1e-6, entry
