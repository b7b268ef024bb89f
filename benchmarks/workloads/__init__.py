"""The benchmark workloads, one module each (see benchmarks/__main__.py for the order).

Each module has NAME, TITLE, the Numba primal `kernel`, `setup(quick)` returning a
`benchmarks.harness.Instance`, optionally a hand-written adjoint (workloads 1, 2, 3, 7, 8) and
`jax_setup(instance)` for the JAX peer.
"""
import os

DATA_DIR = os.environ.get(
    "ADBENCH_DATA",
    os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data",
                                  "adbench")))

ORDER = ["elementwise", "rnn", "heat", "gmm", "lstm", "ba", "nbody", "softdtw"]
