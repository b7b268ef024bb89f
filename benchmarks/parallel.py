"""prange gradients: speed-up with threads, cost against the primal, and how shared shadow
updates are made.

Run: python -m benchmarks.parallel [--quick] [--threads 2] [--repeats 15]

For each kernel (elementwise, n-body forces, a gather over edges, the heat equation: a time loop
around two pranges, whose launches are split), in one run:
- the gradient with T threads against the gradient with 1 thread (speed-up), beside the same
  for the primal kernel (what the machine gives this loop);
- the parallel gradient / parallel primal ratio (T threads) beside the serial gradient / serial
  primal ratio (`njit(kernel.py_func)`), their quotient (par/serial), and the 1-thread gradient
  against the serial one;
- for the gather: per-thread copies of the shadow (the default) against atomic adds;
  `--crossover` sweeps the shadow's size against the loop's iterations instead.

How it times (`rounds`): the gradients are first checked against the serial one. Then the calls
compared with each other (a kernel's 1- and T-thread gradients, 1- and T-thread primals, serial
gradient and primal; copies and atomics) are interleaved: each of `--repeats` rounds times each
call once, in the same order, so a change in the machine's load or clock during the run falls
on all of them alike instead of on whichever was measured in that second. Before each timed
call, one untimed call with the same thread count: the timed one finds the thread pool awake
and its tape and copies allocated, as a call in a user's loop does. Each call's arrays are
reused from round to round (a seed consumed in the first call stays zero: the work is the
same). A time is the median over the rounds; a ratio is the quotient of two medians, and
`[q1-q3]` beside a speed-up is the interquartile range of the per-round ratios (its spread:
a round where another process took a core shows as a low per-round ratio, not a low median).
The column "cpu Tt/1t" (the process's CPU time per T-thread gradient over that of the 1-thread
gradient, medians) says how much work running on T threads adds, whatever the load: T / that
ratio bounds the speed-up an idle machine could give (omp threads spin-wait after a launch, and
that counts as work). The figures mean something only on an otherwise idle machine: print the
load (`uptime`) beside them; on a loaded one, OMP_WAIT_POLICY=PASSIVE spares the spinning.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numba
import numpy as np
from numba import njit, prange

from enzyme_py import Active, Const, Duplicated
from ir_passes import ParallelUpdates
from enzyme_py.modes.reverse import reverse_call


@njit(parallel=True)
def elementwise(x, y):
    for i in prange(x.shape[0]):
        y[i] = math.sin(x[i]) * math.exp(-0.5 * x[i] * x[i]) + math.tanh(x[i])


@njit(parallel=True)
def nbody(pos, mass, force):
    n = pos.shape[0]
    for i in prange(n):
        fx = fy = fz = 0.0
        for j in range(n):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            r2 = dx * dx + dy * dy + dz * dz + 0.01
            w = mass[j] / (r2 * math.sqrt(r2))
            fx += w * dx
            fy += w * dy
            fz += w * dz
        force[i, 0] = mass[i] * fx
        force[i, 1] = mass[i] * fy
        force[i, 2] = mass[i] * fz


@njit(parallel=True)
def heat(u, new, alpha, steps):
    n = u.shape[0]
    for _ in range(steps):
        for i in prange(1, n - 1):
            new[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in prange(1, n - 1):
            u[i] = new[i]


@njit(parallel=True)
def gather(x, edges, k, y):
    for e in prange(edges.shape[0]):
        a, b = edges[e, 0], edges[e, 1]
        d = x[a] - x[b]
        y[e] = k * d * d + math.cos(x[a] * x[b])


def workloads(quick: bool, rng):
    n = 200_000 if quick else 2_000_000
    m = 400 if quick else 1500
    nodes, nedges = (2_000, 200_000) if quick else (20_000, 2_000_000)
    h, steps = (20_000, 10) if quick else (200_000, 20)
    edges = rng.integers(0, nodes, (nedges, 2))
    return {
        "elementwise": (elementwise, lambda: [Duplicated(rng_x(n), np.zeros(n)),
                                              Duplicated(np.zeros(n), np.ones(n))]),
        "n-body": (nbody, lambda: [Duplicated(rng_x(3 * m).reshape(m, 3), np.zeros((m, 3))),
                                   Duplicated(1.0 + rng_x(m) ** 2, np.zeros(m)),
                                   Duplicated(np.zeros((m, 3)), np.ones((m, 3)))]),
        "gather": (gather, lambda: [Duplicated(rng_x(nodes), np.zeros(nodes)), Const(edges),
                                    Active(0.3), Duplicated(np.zeros(nedges), np.ones(nedges))]),
        "heat": (heat, lambda: [Duplicated(np.sin(rng_x(h)), np.ones(h)),
                                Duplicated(np.zeros(h), np.zeros(h)), Active(0.2), Const(steps)]),
    }


def rng_x(n):
    return np.linspace(-2.0, 2.0, n)


def rounds(calls, repeats):
    """Wall and CPU seconds of each call of `calls` ({name: (threads, fn)}) in `repeats`
    interleaved rounds (module docstring): ({name: [wall]}, {name: [cpu]})."""
    wall = {name: [] for name in calls}
    cpu = {name: [] for name in calls}
    for _ in range(repeats):
        for name, (threads, fn) in calls.items():
            numba.set_num_threads(threads)
            fn()
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall[name].append(time.perf_counter() - w0)
            cpu[name].append(time.process_time() - c0)
    return wall, cpu


def ratio(times, a, b):
    """median(a) / median(b), and the quartiles of the per-round ratios a/b."""
    q1, _, q3 = statistics.quantiles([x / y for x, y in zip(times[a], times[b])], n=4)
    return statistics.median(times[a]) / statistics.median(times[b]), q1, q3


def gradient(kernel, make, updates=ParallelUpdates.AUTO):
    args = make()
    return lambda: reverse_call(kernel, args, 1.0, updates=updates)


def primal(kernel, make):
    values = [a.value for a in make()]
    return lambda: kernel(*values)


def check(kernel, make) -> None:
    got, want = make(), make()
    reverse_call(kernel, got, 1.0)
    reverse_call(njit(kernel.py_func), want, 1.0)
    for g, w in zip(got, want):
        if isinstance(g, Duplicated):
            np.testing.assert_allclose(g.shadow, w.shadow, rtol=1e-9, atol=1e-9)


def speed(name, kernel, make, threads, repeats):
    """One row of the main table (module docstring)."""
    check(kernel, make)
    serial = njit(kernel.py_func)
    grad, prim = gradient(kernel, make), primal(kernel, make)
    wall, cpu = rounds({"grad1": (1, grad), "gradt": (threads, grad), "prim1": (1, prim),
                        "primt": (threads, prim), "sgrad": (1, gradient(serial, make)),
                        "sprim": (1, primal(serial, make))}, repeats)
    med = {k: statistics.median(v) for k, v in wall.items()}
    up = ratio(wall, "grad1", "gradt")
    par, ser = med["gradt"] / med["primt"], med["sgrad"] / med["sprim"]
    return (name, med["grad1"], med["gradt"], up, med["prim1"] / med["primt"],
            statistics.median(cpu["gradt"]) / statistics.median(cpu["grad1"]), par, ser,
            par / ser, med["grad1"] / med["sgrad"])


def copies_or_atomics(make, threads, repeats, copies=ParallelUpdates.AUTO):
    """Medians of the gather's gradient with per-task copies (`copies`: AUTO makes them for the
    main table's gather, DETERMINISTIC always) against atomic adds, interleaved: (copies,
    atomics, (atomics/copies, quartiles))."""
    wall, _ = rounds({"copies": (threads, gradient(gather, make, copies)),
                      "atomic": (threads, gradient(gather, make, ParallelUpdates.ATOMIC))}, repeats)
    return (statistics.median(wall["copies"]), statistics.median(wall["atomic"]),
            ratio(wall, "atomic", "copies"))


def crossover(threads, repeats, quick) -> None:
    """Per-task copies (DETERMINISTIC) against atomic adds on the gather, for shadows from 1/64 to 16 times the
    loop's iterations: where the copies stop paying."""
    nedges = 200_000 if quick else 1_000_000
    rng = np.random.default_rng(1)
    print(f"gather with {nedges} iterations, {threads} threads: copies against atomic adds")
    print(f"{'nodes':>10} {'nodes/iter':>10} {'copies':>10} {'atomic':>10} {'atomic/copies':>14}")
    for share in (1 / 64, 1 / 16, 1 / 4, 1, 2, 4, 8, 16):
        nodes = max(2, int(nedges * share))
        edges = rng.integers(0, nodes, (nedges, 2))

        def make(nodes=nodes, edges=edges):
            return [Duplicated(rng_x(nodes), np.zeros(nodes)), Const(edges), Active(0.3),
                    Duplicated(np.zeros(nedges), np.ones(nedges))]
        copies, atomics, (r, q1, q3) = copies_or_atomics(make, threads, repeats,
                                                      ParallelUpdates.DETERMINISTIC)
        print(f"{nodes:10d} {nodes / nedges:10.3f} {copies * 1e3:8.2f}ms {atomics * 1e3:8.2f}ms "
              f"{r:13.2f}x [{q1:.2f}-{q3:.2f}]")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=15, help="interleaved rounds (at least 2)")
    ap.add_argument("--kernels", default="", help="comma-separated names (default: all)")
    ap.add_argument("--crossover", action="store_true",
                    help="only the copies-against-atomics sweep over shadow sizes")
    opts = ap.parse_args(argv)
    threads = min(opts.threads, numba.config.NUMBA_NUM_THREADS)
    if opts.crossover:
        crossover(threads, opts.repeats, opts.quick)
        return
    rows = [speed(name, kernel, make, threads, opts.repeats)
            for name, (kernel, make) in workloads(opts.quick, np.random.default_rng(0)).items()
            if not opts.kernels or name in opts.kernels.split(",")]
    print(f"threading layer {numba.threading_layer()}, {threads} threads "
          f"(of {numba.config.NUMBA_NUM_THREADS}), OMP_WAIT_POLICY "
          f"{os.environ.get('OMP_WAIT_POLICY', 'unset')}, {opts.repeats} interleaved rounds, medians")
    print(f"{'kernel':12} {'grad 1t':>9} {'grad Tt':>9} {'speed-up [q1-q3]':>18} {'primal':>7} "
          f"{'cpu Tt/1t':>9} {'grad/primal par':>15} {'serial':>7} {'par/serial':>10} "
          f"{'grad 1t/serial':>14}")
    for name, g1, gt, (up, q1, q3), pup, cpu, rp, rs, rr, vs in rows:
        spread = f"[{q1:.2f}-{q3:.2f}]"
        print(f"{name:12} {g1 * 1e3:7.2f}ms {gt * 1e3:7.2f}ms {up:5.2f}x {spread:>12} "
              f"{pup:6.2f}x {cpu:8.2f}x {rp:14.2f}x {rs:6.2f}x {rr:9.2f}x {vs:13.2f}x")
    if opts.kernels and "gather" not in opts.kernels.split(","):
        return
    make = workloads(opts.quick, np.random.default_rng(0))["gather"][1]
    copies, atomics, (r, q1, q3) = copies_or_atomics(make, threads, opts.repeats)
    print(f"gather, {threads} threads: per-thread shadow copies {copies * 1e3:.2f}ms, atomic adds "
          f"{atomics * 1e3:.2f}ms ({r:.2f}x [{q1:.2f}-{q3:.2f}])")


if __name__ == "__main__":
    main()
