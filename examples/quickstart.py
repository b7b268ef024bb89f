"""enzyme_py quickstart: reverse-mode gradients of two Numba kernels.

1. A void kernel that writes into an output array (Duplicated input and output).
2. A kernel that returns a float (an Active scalar and a Duplicated array).

Each gradient is printed beside central finite differences, then timed against the plain
kernel. Exits non-zero if a gradient disagrees with finite differences.

    python examples/quickstart.py
"""
import math
import statistics
import sys
import time

import numpy as np
from numba import njit

from enzyme_py import Active, Duplicated, autodiff, check_gradient


@njit
def smooth(x, y):
    """y[i] = tanh(x[i]) * x[i+1]  + 0.5 * x[i]^2   (the last y[i] uses x[0])."""
    n = x.shape[0]
    for i in range(n):
        nxt = x[i + 1] if i + 1 < n else x[0]
        y[i] = math.tanh(x[i]) * nxt + 0.5 * x[i] * x[i]


@njit
def energy(k, x):
    """Spring chain with a cosine potential: sum 0.5 k (x[i+1]-x[i])^2 + sum cos(x[i])."""
    e = 0.0
    for i in range(x.shape[0] - 1):
        d = x[i + 1] - x[i]
        e += 0.5 * k * d * d
    for i in range(x.shape[0]):
        e += math.cos(x[i])
    return e


def median_time(fn, reset=None, repeats=51, warmup=5):
    """Median wall time of fn() over `repeats` calls after `warmup` calls; `reset()` runs
    before each call, outside the timed region."""
    times = []
    for k in range(warmup + repeats):
        if reset is not None:
            reset()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        if k >= warmup:
            times.append(t1 - t0)
    return statistics.median(times)


def fmt_time(t):
    return f"{t * 1e6:9.1f} us" if t < 1e-3 else f"{t * 1e3:9.3f} ms"


def main():
    rng = np.random.default_rng(0)
    ok = True

    # ---- 1. void kernel writing an output array ---------------------------------------------
    print("1) smooth(x, y): writes y; L = sum(dy * y), dy = 1")
    x = rng.uniform(-1.0, 1.0, 6)
    dx, y, dy = np.zeros_like(x), np.zeros_like(x), np.ones_like(x)
    autodiff(smooth, Duplicated(x, dx), Duplicated(y, dy))   # dx += dL/dx; dy is consumed (zeroed)

    report = check_gradient(smooth, Duplicated(x, np.zeros_like(x)),
                            Duplicated(np.zeros_like(x), np.ones_like(x)))
    print(f"   {'i':>3}  {'autodiff dL/dx':>16}  {'finite diff':>16}")
    for i in range(x.shape[0]):
        print(f"   {i:>3}  {dx[i]:16.10f}  {report[0].fd[i]:16.10f}")
    print(f"   shadow of y after the call: {dy}  (overwritten output: consumed)")
    print(f"   check_gradient: {'PASSED' if report.passed else 'FAILED'} "
          f"(max rel err {report[0].max_rel_err:.1e})")
    ok &= report.passed and np.allclose(dx, report[0].fd, rtol=1e-6, atol=1e-9)

    n = 100_000
    xb = rng.uniform(-1.0, 1.0, n)
    yb, dxb, dyb = np.zeros(n), np.zeros(n), np.ones(n)
    t_primal = median_time(lambda: smooth(xb, yb))

    def reset():
        dxb[:] = 0.0
        dyb[:] = 1.0
    t_grad = median_time(lambda: autodiff(smooth, Duplicated(xb, dxb), Duplicated(yb, dyb)), reset)
    print(f"   time (n={n}, median): primal {fmt_time(t_primal)}, gradient {fmt_time(t_grad)} "
          f"({t_grad / t_primal:.1f}x)")

    # ---- 2. kernel returning a float -----------------------------------------------------------
    print("\n2) energy(k, x) -> float; Active k, Duplicated x")
    k = 2.5
    x = rng.uniform(-1.0, 1.0, 6)
    dx = np.zeros_like(x)
    dk, _ = autodiff(energy, Active(k), Duplicated(x, dx))
    report = check_gradient(energy, Active(k), Duplicated(x, np.zeros_like(x)))
    print(f"   dE/dk: autodiff {dk:.10f}   finite diff {report[0].fd:.10f}")
    print(f"   {'i':>3}  {'autodiff dE/dx':>16}  {'finite diff':>16}")
    for i in range(x.shape[0]):
        print(f"   {i:>3}  {dx[i]:16.10f}  {report[1].fd[i]:16.10f}")
    print(f"   check_gradient: {'PASSED' if report.passed else 'FAILED'}")
    ok &= report.passed and math.isclose(dk, report[0].fd, rel_tol=1e-6)

    xb = rng.uniform(-1.0, 1.0, n)
    dxb = np.zeros(n)
    t_primal = median_time(lambda: energy(k, xb))
    t_grad = median_time(lambda: autodiff(energy, Active(k), Duplicated(xb, dxb)),
                         lambda: dxb.fill(0.0))
    print(f"   time (n={n}, median): primal {fmt_time(t_primal)}, gradient {fmt_time(t_grad)} "
          f"({t_grad / t_primal:.1f}x)")

    print("\nall gradients agree with finite differences" if ok else "\nGRADIENT MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
