"""CUDA kernels without a GPU: gradient and tangent kernels build, verify, compile to PTX that
ptxas accepts for sm_80 and sm_90, and match finite differences on the CPU harness (threads
emulated; OS threads and a real barrier for the shared-memory reductions, the lanes of a warp
meeting at each shuffle).

The kernels are checked in one process (tests/cuda_kernels.py), which spares each its own start
(importing Numba, numba-cuda and enzyme_py); some LLVM backend errors abort the process, so a
kernel that process did not report is checked again in a process of its own, where a crash
fails its test alone. Skipped without the `cuda` extra (numba-cuda and the nvcc wheel).
"""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
HAVE_CUDA_EXTRA = all(importlib.util.find_spec(m) is not None
                      for m in ("numba_cuda", "nvidia.cuda_nvcc"))
pytestmark = pytest.mark.skipif(not HAVE_CUDA_EXTRA,
                                reason="needs the cuda extra: pip install -e '.[cuda]'")

KERNELS = ["elementwise", "early_return", "gather", "nbody", "block_sum", "block_sum_atomic",
           "local_array", "elementwise_f32", "warp_softmax", "warp_broadcast", "warp_sum_f32"]
TOLERANCE = {"elementwise_f32": 2e-3, "warp_sum_f32": 2e-3}
# How the reverse sweep must add into each kernel's shadows (shadow_updates.py)
UPDATES = {
    "elementwise": ["private", "privatised per block"],     # y[i], x[i]; the Active scalar a
    "early_return": ["private"],
    "gather": ["atomic", "private", "privatised per block"],  # x[idx[i]]; x[i], y[i]; w[0], w[1]
    "nbody": ["atomic", "private"],                           # pos[j], pos[i]; force[i, k]
}


def _reports(names):
    """(the reports by kernel name, the finished process) of checking `names` in one process."""
    r = subprocess.run([sys.executable, os.path.join(HERE, "cuda_kernels.py"), *names],
                       capture_output=True, text=True, timeout=900)
    reports = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    return {rep["kernel"]: rep for rep in reports}, r


def run_check(name):
    """The report of checking one kernel in a process of its own."""
    reports, r = _reports([name])
    assert r.returncode == 0, f"the check of {name} died (rc {r.returncode}):\n{r.stderr[-3000:]}"
    return reports[name]


@pytest.fixture(scope="module")
def together():
    """The reports of the kernels that one process checking all of KERNELS made."""
    return _reports(KERNELS)[0]


@pytest.mark.parametrize("name", KERNELS)
def test_kernel_gradient_without_gpu(name, together):
    report = together[name] if name in together else run_check(name)
    for mode in ("Reverse", "Forward"):
        entry = report[mode]
        for arch in ("sm_80", "sm_90"):
            rc, msg = entry[f"ptxas_{arch}"]
            assert rc == 0, f"{name} {mode}: ptxas {arch} rejected the PTX: {msg}"
        for arg, err in entry["errors"].items():
            assert err < TOLERANCE.get(name, 1e-6), \
                f"{name} {mode}: argument {arg} differs from finite differences by {err:.2e}"
    if name in UPDATES:
        assert report["Reverse"]["updates"] == UPDATES[name]
