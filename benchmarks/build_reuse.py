"""`python -m benchmarks.build_reuse [--reps N]`: the builds of one kernel in every variant
(reverse, forward, cache="always", and deterministic=True for a prange kernel), with and
without the capture + cleanup kept from the first build (enzyme_py/bridge/memo.py).

Each repetition makes fresh dispatchers of the same kernels (Numba's overload caches stay
warm, as in a long-running process) and builds every variant once with the memo and once
with `forget_all()` before each build, alternating which goes first. Prints the seconds per
repetition and the ratio "without / with" measured in this one run."""
import sys
import time

import numba
import numpy as np
from numba import prange

import enzyme_py as ez
from enzyme_py.bridge import memo


def _solve_energy(A, b, x, w):
    y = np.linalg.solve(A, b + w * x)
    s = 0.0
    for i in range(y.shape[0]):
        s += np.sin(y[i]) * x[i] + np.median(x) * y[i] ** 2
    return s + np.linalg.norm(A @ x)


def _heat(u, out, k):
    n = u.shape[0]
    s = 0.0
    for i in prange(1, n - 1):
        out[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        s += out[i] * out[i]
    return s


def _linalg_builds(kern, rng):
    A = rng.standard_normal((5, 5)) + 5.0 * np.eye(5)
    b, x = rng.standard_normal(5), rng.standard_normal(5)
    dA, dx = np.zeros_like(A), np.zeros_like(x)
    calls = [dict(), dict(mode=ez.Forward), dict(cache="always")]
    for kw in calls:
        if kw.get("mode") is ez.Forward:
            yield lambda kw=kw: ez.autodiff(kern, ez.Duplicated(A, np.ones_like(A)), ez.Const(b),
                                            ez.Duplicated(x, np.ones_like(x)),
                                            ez.Active(0.3, 1.0), **kw)
        else:
            yield lambda kw=kw: ez.autodiff(kern, ez.Duplicated(A, dA), ez.Const(b),
                                            ez.Duplicated(x, dx), ez.Active(0.3), **kw)


def _parallel_builds(kern, rng):
    u = rng.standard_normal(16)
    out, du, dout = np.zeros(16), np.zeros(16), np.zeros(16)
    for kw in (dict(), dict(mode=ez.Forward), dict(cache="always"), dict(deterministic=True)):
        if kw.get("mode") is ez.Forward:
            yield lambda kw=kw: ez.autodiff(kern, ez.Duplicated(u, np.ones(16)),
                                            ez.Duplicated(out, np.zeros(16)), ez.Active(0.1, 1.0),
                                            **kw)
        else:
            yield lambda kw=kw: ez.autodiff(kern, ez.Duplicated(u, du), ez.Duplicated(out, dout),
                                            ez.Active(0.1), **kw)


def _variants(keep: bool, rng) -> float:
    """Seconds to build every variant of fresh copies of both kernels."""
    lin = numba.njit(_solve_energy)
    par = numba.njit(parallel=True)(_heat)
    start = time.perf_counter()
    for make in (_linalg_builds, _parallel_builds):
        kern = lin if make is _linalg_builds else par
        for build in make(kern, rng):
            if not keep:
                memo.forget_all()
            build()
    return time.perf_counter() - start


def main(argv) -> None:
    reps = int(argv[argv.index("--reps") + 1]) if "--reps" in argv else 3
    rng = np.random.default_rng(0)
    _variants(True, rng)      # warm Numba's overloads and enzyme_py's imports
    with_memo, without = [], []
    for r in range(reps):
        order = (True, False) if r % 2 == 0 else (False, True)
        for keep in order:
            (with_memo if keep else without).append(_variants(keep, rng))
    print("with memo  (s):", " ".join(f"{t:.2f}" for t in with_memo))
    print("without    (s):", " ".join(f"{t:.2f}" for t in without))
    print(f"without / with: {sum(without) / sum(with_memo):.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
