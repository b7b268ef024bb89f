"""`python -m benchmarks.build_profile [NAME ...] [--quick] [--cprofile N]`: the first gradient
build of each kernel, stage by stage (enzyme_py/timings.py: capture, cleanup, parse, AD, print,
verify, O3 + codegen, entry), with the disk cache off, and the whole first build's wall and CPU
seconds (compile_gradient: the gradient, its guarded variant and the checked entry).
`--cprofile N` adds the N functions with the most cumulative time of each build (CPU seconds
with ENZYME_PY_TIMINGS=cpu, as the tables). Kernels: small (a five-line loop, the size of most
tests' kernels; built first, so its figure is a fresh process's first build), gauss_loglik, gmm,
rnn_matmul (benchmarks/workloads) and kalman (cholesky, solve and @ in a time loop, defined
here)."""
import cProfile
import io
import os
import pstats
import sys
import time

import numpy as np
from numba import njit

os.environ.pop("ENZYME_PY_CACHE_DIR", None)

from enzyme_py import timings  # noqa: E402

from .harness import Arg, Instance  # noqa: E402

NAMES = ("small", "gauss_loglik", "gmm", "rnn_matmul", "kalman")


@njit
def small(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.sin(x[i]) * y[i] + x[i] ** 2
    return s


def small_setup():
    x = np.linspace(0.0, 1.0, 10)
    return Instance(small, [Arg("dup", x, name="x"), Arg("const", np.ones(10), name="y")],
                    note="n=10")


@njit
def kalman(F, Q, R, Y):
    """Negative log-likelihood of observations Y (T, n) under x' = F x + w, y = x + v."""
    T, n = Y.shape
    x = np.zeros(n)
    P = np.eye(n)
    nll = 0.0
    for t in range(T):
        x = F @ x
        P = F @ P @ F.T + Q
        S = P + R
        L = np.linalg.cholesky(S)
        e = Y[t] - x
        z = np.linalg.solve(L, e)
        nll += 0.5 * np.sum(z * z) + np.sum(np.log(np.diag(L)))
        K = np.linalg.solve(S, P).T
        x = x + K @ e
        P = P - K @ P
    return nll


def kalman_setup(quick=False, n=4, T=16):
    if quick:
        n, T = 3, 6
    rng = np.random.default_rng(3)
    F = 0.9 * np.eye(n) + 0.05 * rng.standard_normal((n, n))
    Q = 0.1 * np.eye(n)
    R = 0.2 * np.eye(n)
    Y = rng.standard_normal((T, n))
    args = [Arg("dup", F, name="F"), Arg("dup", Q, name="Q"), Arg("dup", R, name="R"),
            Arg("const", Y, name="Y")]
    return Instance(kalman, args, note=f"n={n} T={T}")


def instance(name, quick):
    if name == "kalman":
        return kalman_setup(quick=quick)
    if name == "small":
        return small_setup()
    import importlib
    return importlib.import_module(f"benchmarks.workloads.{name}").setup(quick=quick)


def profile(name, quick=False, top=0):
    """Build `name`'s gradient once; print its stage table (and cProfile's top entries)."""
    inst = instance(name, quick)
    inst.reset()
    inst.primal()
    tables = []
    keep = timings.print_table
    timings.print_table = lambda table, label="": tables.append((label, dict(table)))
    clock = time.process_time if os.environ.get("ENZYME_PY_TIMINGS") == "cpu" else time.perf_counter
    prof = cProfile.Profile(clock) if top else None
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        if prof:
            prof.enable()
        inst.reset()
        inst.compile()
    finally:
        if prof:
            prof.disable()
        timings.print_table = keep
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"== {name} ({inst.note}): first build {wall:.2f} s ({cpu:.2f} CPU s), "
          f"{len(tables)} build(s)")
    for label, table in tables:
        print(timings.format_table(table, label))
    if prof:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
        print(out.getvalue())
    inst.reset()
    inst.grad()
    ok = all(np.all(np.isfinite(d)) for d in inst.derivs if isinstance(d, np.ndarray))
    print(f"  gradient finite: {ok}")


def main(argv):
    quick = "--quick" in argv
    top = 0
    if "--cprofile" in argv:
        top = int(argv[argv.index("--cprofile") + 1])
    names = [a for a in argv if a in NAMES] or list(NAMES)
    for name in names:
        profile(name, quick=quick, top=top)


if __name__ == "__main__":
    main(sys.argv[1:])
