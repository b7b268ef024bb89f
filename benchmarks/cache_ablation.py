"""cache="minimal" against cache="always": tape bytes and gradient time on mutating kernels.

Run: python -m benchmarks.cache_ablation [--quick]
Ratios are minimal / always, measured pair by pair in this process.
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


def measure(kernel, make_args, repeats):
    row = {}
    for mode in ("minimal", "always"):
        row[f"tape_{mode}"] = explain(kernel, *make_args(), cache=mode).tape_bytes
    times = {"minimal": [], "always": []}
    for _ in range(repeats):  # interleaved, so both see the same machine
        for mode in ("minimal", "always"):
            args = make_args()
            times[mode].append(median_time(lambda: autodiff(kernel, *args, cache=mode), 1))
    row["time_minimal"] = float(np.median(times["minimal"]))
    row["time_always"] = float(np.median(times["always"]))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    repeats = 3 if args.quick else 7
    print(f"{'kernel':10} {'tape minimal':>14} {'tape always':>14} {'bytes ratio':>12} "
          f"{'t minimal ms':>13} {'t always ms':>12} {'time ratio':>11}")
    for name, (kernel, make_args) in workloads(args.quick).items():
        autodiff(kernel, *make_args())                  # compile both variants first
        autodiff(kernel, *make_args(), cache="always")
        r = measure(kernel, make_args, repeats)
        ratio = r["tape_minimal"] / r["tape_always"] if r["tape_always"] else float("nan")
        print(f"{name:10} {r['tape_minimal']:14d} {r['tape_always']:14d} {ratio:12.3f} "
              f"{1e3 * r['time_minimal']:13.3f} {1e3 * r['time_always']:12.3f} "
              f"{r['time_minimal'] / r['time_always']:11.2f}")


if __name__ == "__main__":
    main()
