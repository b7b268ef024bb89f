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
           "local_array", "elementwise_f32", "warp_softmax", "warp_broadcast", "warp_sum_f32",
           "block_sum_pair", "histogram_shared", "histogram_f32_wide", "nbody_tiled",
           "nbody_tiled_f32_wide", "matmul_shared", "relax_in_place", "weighted_deterministic",
           "dynamic_sum"]
TOLERANCE = {"elementwise_f32": 2e-3, "warp_sum_f32": 2e-3, "histogram_f32_wide": 2e-3,
             "nbody_tiled_f32_wide": 2e-3}
# How the reverse sweep must add into each kernel's shadows (shadow_updates.py)
UPDATES = {
    "elementwise": ["private", "privatised per block"],     # y[i], x[i]; the Active scalar a
    "early_return": ["private"],
    "gather": ["atomic", "private", "privatised per block"],  # x[idx[i]]; x[i], y[i]; w[0], w[1]
    "nbody": ["atomic", "private"],                           # pos[j], pos[i]; force[i, k]
    # shared atomics into bins[b], global ones into hist[t]; bins[t], w[i]
    "histogram_shared": ["atomic", "private"],
    "nbody_tiled": ["atomic", "private"],       # tile[k, .], pos[start + t]; tile[t, .], pos[i]
    "matmul_shared": ["atomic"],                # a 2-D launch: no injective thread index
    # x[i], y[i]; w[0], w[1] and the Active a, summed per block, the blocks' sums in block order
    "weighted_deterministic": ["private", "privatised per block, the blocks' sums added in block order"],
}

# How many shadow updates explain reports atomic: each is an atomic per thread (or per warp)
ATOMICS = {
    "elementwise": 0,
    "gather": 2,                      # x[idx[i]], x[i]
    "nbody": 7,                       # pos[j, k], pos[i, k] (read in the loop), mass[j]
    "histogram_shared": 1,            # bins[b] (the shared bins' shadow)
    # pos[i, k] (pos is also read at other rows), pos[start + t, k] and mass[start + t] (every
    # block reads them), the four tile[t, .] stores (the last merged with the zeros), the four
    # tile[k, .] reads
    "nbody_tiled": 15,
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
    if name in ATOMICS:
        assert report["Reverse"]["atomics"] == ATOMICS[name]
    if "versus_atomic" in report["Reverse"]:       # deterministic=True
        rev = report["Reverse"]
        assert rev["float_atomics"] == 0 and rev["float_atomics_without"] > 0, rev
        assert rev["versus_atomic"]["error"] < 1e-12, rev
        assert rev["versus_atomic"]["reversed_same_bits"], rev


def test_float32_adjoints_summed_in_float64():
    """pair_sum in float32 (512 points): each x[i]'s adjoint gets +1e6 through x[j] at j == i and
    -1e6 through x[i], and is a few hundred in the end. Against the float64 gradient at the same
    points, float32 sums lose it to rounding (7e-3); accumulate="float64" keeps it (1.4e-7), and
    ptxas accepts that kernel's PTX."""
    report = run_check("--float64-sums")
    wide = report["float64"]
    for arch in ("sm_80", "sm_90"):
        assert wide[f"ptxas_{arch}"][0] == 0, wide[f"ptxas_{arch}"]
    assert wide["error"] < 1e-6, report
    assert report["None"]["error"] > 1e-4, report     # the case has the cancellation


def test_batched_forward_mode_without_gpu():
    """BatchDuplicated in forward mode: two directions in one launch (the Active scalar of
    elementwise with a tuple of two tangents, the shared shadows of block_sum twice, the
    shuffled tangents of warp_softmax, two shadows in dynamic_sum's dynamic shared memory);
    ptxas accepts the PTX and each direction matches a central difference along it."""
    names = ["elementwise", "block_sum", "warp_softmax", "dynamic_sum"]
    reports, r = _reports(["--batched", *names])
    assert r.returncode == 0, r.stderr[-3000:]
    assert set(reports) == set(names), r.stderr[-3000:]
    for name, report in reports.items():
        for arch in ("sm_80", "sm_90"):
            assert report[f"ptxas_{arch}"][0] == 0, (name, report[f"ptxas_{arch}"])
        assert len(report["errors"]) >= 4 and {k[-2:] for k in report["errors"]} == {".0", ".1"}
        for lane, err in report["errors"].items():
            assert err < 1e-6, f"{name}: argument.direction {lane} differs from FD by {err:.2e}"
