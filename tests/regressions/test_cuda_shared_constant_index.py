"""A numba-cuda kernel writing a shared array at a constant index other than 0 (`s[1]`, as the
last step of every block reduction does, numba-cuda's `cuda.reduce` included) was refused with
"a use of shared memory enzyme_py does not model": LLVM prints an `addrspacecast` nested in a
`getelementptr` constant without the space the pattern expected. The GPU-free check
(tests/cuda_kernels.py, case two_partials): ptxas accepts both modes' PTX and the CPU harness
matches central finite differences."""
import pytest

from test_cuda_codegen import HAVE_CUDA_EXTRA, run_check

pytestmark = pytest.mark.skipif(not HAVE_CUDA_EXTRA, reason="needs the cuda extra")


def test_constant_shared_indices_differentiate():
    report = run_check("two_partials")
    for mode in ("Reverse", "Forward"):
        entry = report[mode]
        assert entry["ptxas_sm_80"][0] == 0 and entry["ptxas_sm_90"][0] == 0, entry
        assert entry["errors"] and max(entry["errors"].values()) < 1e-6, entry
