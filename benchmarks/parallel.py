"""prange gradients: speed-up with threads, cost against the primal, and how shared shadow
updates are made.

Run: python -m benchmarks.parallel [--quick] [--threads 2]

For each kernel (elementwise, n-body forces, a gather over edges, the heat equation: a time loop
around two pranges, whose launches are split), in one run:
- the gradient with T threads against the gradient with 1 thread (speed-up), beside the same
  for the primal kernel (what the machine gives this loop);
- the parallel gradient / parallel primal ratio (T threads) beside the serial gradient / serial
  primal ratio (`njit(kernel.py_func)`), and the 1-thread gradient against the serial one;
- for the gather: per-thread copies of the shadow (the default) against atomic adds;
  `--crossover` sweeps the shadow's size against the loop's iterations instead.
Every timed call starts from the same state; the gradients are checked against the serial one
first. Times are medians. On a loaded machine the wall-clock speed-ups mean little; the column
"cpu Tt/1t" (the process's CPU time per T-thread gradient over that of the 1-thread gradient,
medians) says how much work running on T threads adds, whatever the load: T / that ratio
bounds the speed-up an idle machine could give (spin-waiting threads count as work).
"""
from __future__ import annotations

import argparse
import math
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


def median(fn, repeats, clock=time.perf_counter):
    fn()
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


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
    numba.set_num_threads(1)
    grad1 = median(gradient(kernel, make), repeats)
    cpu1 = median(gradient(kernel, make), repeats, time.process_time)
    prim1 = median(primal(kernel, make), repeats)
    numba.set_num_threads(threads)
    gradt = median(gradient(kernel, make), repeats)
    cput = median(gradient(kernel, make), repeats, time.process_time)
    primt = median(primal(kernel, make), repeats)
    sgrad = median(gradient(serial, make), repeats)
    sprim = median(primal(serial, make), repeats)
    return (name, grad1, gradt, grad1 / gradt, prim1 / primt, cput / cpu1, gradt / primt,
            sgrad / sprim, grad1 / sgrad)


def crossover(threads, repeats, quick) -> None:
    """Per-task copies (DETERMINISTIC always makes them) against atomic adds on the gather, for
    shadows from 1/64 to 16 times the loop's iterations: where the copies stop paying."""
    nedges = 200_000 if quick else 1_000_000
    rng = np.random.default_rng(1)
    print(f"gather with {nedges} iterations, {threads} threads: copies against atomic adds")
    print(f"{'nodes':>10} {'nodes/iter':>10} {'copies':>10} {'atomic':>10} {'atomic/copies':>14}")
    numba.set_num_threads(threads)
    for ratio in (1 / 64, 1 / 16, 1 / 4, 1, 2, 4, 8, 16):
        nodes = max(2, int(nedges * ratio))
        edges = rng.integers(0, nodes, (nedges, 2))

        def make(nodes=nodes, edges=edges):
            return [Duplicated(rng_x(nodes), np.zeros(nodes)), Const(edges), Active(0.3),
                    Duplicated(np.zeros(nedges), np.ones(nedges))]
        copies = median(gradient(gather, make, ParallelUpdates.DETERMINISTIC), repeats)
        atomics = median(gradient(gather, make, ParallelUpdates.ATOMIC), repeats)
        print(f"{nodes:10d} {nodes / nedges:10.3f} {copies * 1e3:8.2f}ms {atomics * 1e3:8.2f}ms "
              f"{atomics / copies:13.2f}x")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=7)
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
          f"(of {numba.config.NUMBA_NUM_THREADS})")
    print(f"{'kernel':12} {'grad 1t':>10} {'grad Tt':>10} {'speed-up':>9} {'primal':>7} "
          f"{'cpu Tt/1t':>10} {'grad/primal par':>16} {'grad/primal serial':>19} "
          f"{'grad 1t/serial':>15}")
    for name, g1, gt, up, pup, cpu, rp, rs, vs in rows:
        print(f"{name:12} {g1 * 1e3:9.2f}ms {gt * 1e3:9.2f}ms {up:8.2f}x {pup:6.2f}x {cpu:9.2f}x "
              f"{rp:15.2f}x {rs:18.2f}x {vs:14.2f}x")
    if opts.kernels and "gather" not in opts.kernels.split(","):
        return
    kernel, make = workloads(opts.quick, np.random.default_rng(0))["gather"]
    numba.set_num_threads(threads)
    copies = median(gradient(kernel, make), opts.repeats)
    atomics = median(gradient(kernel, make, ParallelUpdates.ATOMIC), opts.repeats)
    print(f"gather, {threads} threads: per-thread shadow copies {copies * 1e3:.2f}ms, atomic adds "
          f"{atomics * 1e3:.2f}ms ({atomics / copies:.2f}x)")


if __name__ == "__main__":
    main()
