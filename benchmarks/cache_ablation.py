"""cache="auto" (the default), "minimal" and "always": tape bytes and gradient time on mutating
kernels.

Run: python -m benchmarks.cache_ablation [--quick]
Times are medians of calls interleaved mode by mode in this process.
"""
from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from enzyme_py import Active, Const, Duplicated, autodiff, explain


@numba.njit
def rnn(W, U, xs, h):
    n = h.shape[0]
    tmp = np.empty(n)
    for t in range(xs.shape[0]):
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += W[i, j] * h[j]
            for j in range(xs.shape[1]):
                s += U[i, j] * xs[t, j]
            tmp[i] = np.tanh(s)
        h[:] = tmp


@numba.njit
def heat(u, k, steps):
    n = u.shape[0]
    new = np.empty(n)
    for t in range(steps):
        for i in range(1, n - 1):
            new[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = new[i]


@numba.njit
def stencil(u, w, steps):
    """Gauss-Seidel style: each point updated in place from its already-updated left neighbour."""
    for t in range(steps):
        for i in range(1, u.shape[0] - 1):
            u[i] = w * u[i - 1] + (1.0 - 2.0 * w) * u[i] + w * u[i + 1] + 0.01 * np.sin(u[i])


def workloads(quick: bool):
    rng = np.random.default_rng(0)
    hidden, inputs, steps = 32, 16, (10 if quick else 100)
    n = 1000 if quick else 100_000
    heat_steps = 5 if quick else 100
    return {
        "rnn": (rnn, lambda: (Duplicated(rng.normal(0, 0.2, (hidden, hidden)), np.zeros((hidden, hidden))),
                              Duplicated(rng.normal(0, 0.2, (hidden, inputs)), np.zeros((hidden, inputs))),
                              Duplicated(rng.normal(0, 1, (steps, inputs)), np.zeros((steps, inputs))),
                              Duplicated(np.zeros(hidden), np.ones(hidden)))),
        "heat": (heat, lambda: (Duplicated(rng.random(n), np.ones(n)), Active(0.2), Const(heat_steps))),
        "stencil": (stencil, lambda: (Duplicated(rng.random(n), np.ones(n)), Const(0.25),
                                      Const(heat_steps))),
    }


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


MODES = ("auto", "minimal", "always")


def measure(kernel, make_args, repeats):
    row = {}
    for mode in MODES:
        row[f"tape_{mode}"] = explain(kernel, *make_args(), cache=mode).tape_bytes
    times = {mode: [] for mode in MODES}
    for _ in range(repeats):  # interleaved, so all see the same machine
        for mode in MODES:
            args = make_args()
            times[mode].append(median_time(lambda: autodiff(kernel, *args, cache=mode), 1))
    for mode in MODES:
        row[f"time_{mode}"] = float(np.median(times[mode]))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    repeats = 3 if args.quick else 7
    print(f"{'kernel':10}" + "".join(f" {'tape ' + m:>13}" for m in MODES)
          + "".join(f" {'ms ' + m:>11}" for m in MODES))
    for name, (kernel, make_args) in workloads(args.quick).items():
        for mode in MODES:                                  # compile every variant first
            autodiff(kernel, *make_args(), cache=mode)
        r = measure(kernel, make_args, repeats)
        print(f"{name:10}" + "".join(f" {r['tape_' + m]:13d}" for m in MODES)
              + "".join(f" {1e3 * r['time_' + m]:11.3f}" for m in MODES))


if __name__ == "__main__":
    main()
