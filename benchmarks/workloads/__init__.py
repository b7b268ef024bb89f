"""The benchmark workloads, one module each (see benchmarks/__main__.py for the order).

Each module has NAME, TITLE, the Numba primal `kernel`, `setup(quick)` returning a
`benchmarks.harness.Instance`, optionally a hand-written adjoint (workloads 1, 2, 3, 7, 8), and
`jax_setup(instance)`, `torch_setup(instance)`, `warp_setup(instance)` for the peers, each
returning (primal call, gradient call, gradient vector); a missing one prints "no port".
Warp's kernels live in `_warp_kernels.py`, imported only by the Warp ports.
"""
import os

DATA_DIR = os.environ.get(
    "ADBENCH_DATA",
    os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data",
                                  "adbench")))

ORDER = ["elementwise", "elementwise_noneed", "rnn", "heat", "gmm", "lstm", "ba", "nbody", "softdtw",
         "rnn_matmul", "gauss_loglik"]
