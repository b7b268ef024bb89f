"""A Kalman filter's log-likelihood in a 200-step loop: gradient time against primal time, for
state sizes 4 to 64 (issue 28: small linear-algebra calls must not pay for BLAS threading).

    python -m benchmarks.kalman [--sizes 4,16,64] [--steps 200] [--rounds 5]

Each step predicts (`F @ x`, `F @ P @ F.T + Q`), factors the innovation covariance
(`np.linalg.cholesky`), solves with a matrix right-hand side (`np.linalg.solve(S, H @ P)`, the
gain) and a vector one, and updates. The gradient is with respect to F, Q and R. Times are the
best of `--rounds` rounds that run the primal and the gradient in turn. OpenBLAS's threads are
left as the user has them: set OPENBLAS_NUM_THREADS before the run to compare (the default is
one thread per core). The printed ratios are gradient / primal per size, by the wall clock and
by the calling thread's CPU time (which leaves out the time another process holds the core,
and a wait for OpenBLAS's threads when they sleep rather than spin).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
from numba import njit

from enzyme_py import Const, Duplicated, autodiff


@njit
def kalman_loglik(F, H, Q, R, ys, x0, P0):
    x = x0.copy()
    P = P0.copy()
    ll = 0.0
    for t in range(ys.shape[0]):
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        L = np.linalg.cholesky(S)
        v = ys[t] - H @ x
        K = np.linalg.solve(S, H @ P).T          # the gain, a matrix right-hand side
        x = x + K @ v
        P = P - K @ (H @ P)
        ll -= 0.5 * np.dot(v, np.linalg.solve(S, v)) + np.sum(np.log(np.diag(L)))
    return ll


def problem(n, steps, seed=0):
    """A stable n-state system observed in full (H = I + small coupling), `steps` observations."""
    rng = np.random.default_rng(seed)
    F = 0.9 * np.eye(n) + 0.05 * rng.standard_normal((n, n)) / np.sqrt(n)
    H = np.eye(n) + 0.1 * rng.standard_normal((n, n)) / np.sqrt(n)
    Q = 0.1 * np.eye(n)
    R = 0.5 * np.eye(n)
    ys = rng.standard_normal((steps, n))
    return F, H, Q, R, ys, np.zeros(n), np.eye(n)


def gradient_call(F, H, Q, R, ys, x0, P0):
    dF, dQ, dR = np.zeros_like(F), np.zeros_like(Q), np.zeros_like(R)

    def call():
        dF[:] = 0.0
        dQ[:] = 0.0
        dR[:] = 0.0
        autodiff(kalman_loglik, Duplicated(F, dF), Const(H), Duplicated(Q, dQ),
                 Duplicated(R, dR), Const(ys), Const(x0), Const(P0))
    return call, (dF, dQ, dR)


def measure(n, steps, rounds):
    """(primal s, gradient s) at state size n, each the best of `rounds` interleaved rounds, by
    the wall clock and by the calling thread's CPU time."""
    args = problem(n, steps)
    grad, _ = gradient_call(*args)
    kalman_loglik(*args)
    grad()
    best = {}
    for _ in range(rounds):
        for name, call in (("primal", lambda: kalman_loglik(*args)), ("grad", grad)):
            w, c = time.perf_counter(), time.thread_time()
            call()
            c, w = time.thread_time() - c, time.perf_counter() - w
            bw, bc = best.get(name, (float("inf"), float("inf")))
            best[name] = (min(bw, w), min(bc, c))
    return best["primal"], best["grad"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="4,8,16,32,64")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}, "
          f"{os.cpu_count()} CPUs, {a.steps} steps")
    print(f"{'n':>4} {'primal ms':>10} {'gradient ms':>12} {'grad/primal':>12} {'(CPU time)':>11}")
    for n in map(int, a.sizes.split(",")):
        p, g = measure(n, a.steps, a.rounds)
        print(f"{n:>4} {p[0] * 1e3:>10.3f} {g[0] * 1e3:>12.3f} {g[0] / p[0]:>12.2f} "
              f"{g[1] / p[1]:>11.2f}")


if __name__ == "__main__":
    main()
