"""Jacobians of a kernel through JAX and PyTorch: the batched rules (one batched reverse-mode call
for jacrev's k seeds, one forward-mode call with k directions for jacfwd's) against the loop
over the batch (`JaxKernel.lanes = False`, `KernelOp.lanes = False`: one reverse sweep from the
tape, or one forward-mode call, per row).

    python -m benchmarks.jacobian_lanes [--rounds 5] [--steps 50]

The kernel: the heat equation in place on k points (k inputs, k outputs), `--steps` steps, for
k = 8, 16, 32, 64. Per round the batched and the looped Jacobian are timed one after the other
(the best of 3 calls each); the median over the rounds of looped / batched is printed (above 1:
the batched rule is faster). The first call of each (the builds) is not timed.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from numba import njit


@njit
def heat(u, kappa, steps):
    n = u.shape[0]
    tmp = np.empty_like(u)
    for _ in range(steps):
        for i in range(1, n - 1):
            tmp[i] = u[i] + kappa[i] * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = tmp[i]


def best(fn, calls=3):
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def ratios(batched, looped, rounds):
    batched(), looped()
    rs, tb, tl = [], [], []
    for _ in range(rounds):
        b, lp = best(batched), best(looped)
        rs.append(lp / b)
        tb.append(b)
        tl.append(lp)
    return statistics.median(rs), min(tb), min(tl)


def jax_rows(ks, steps, rounds):
    import jax
    from enzyme_py.jax import wrap
    jax.config.update("jax_enable_x64", True)
    for k in ks:
        u0, kappa = np.sin(np.linspace(0, np.pi, k)), np.full(k, 0.2)
        fs = {}
        for lanes in (True, False):
            f = wrap(heat, (u0, kappa, steps), inputs=(0, 1), outputs=(0,))
            f.kernel.lanes = lanes
            fs[lanes] = f
        for kind in ("jacrev", "jacfwd"):
            jac = {lanes: jax.jit(getattr(jax, kind)(f, argnums=(0, 1))) for lanes, f in fs.items()}
            run = {lanes: (lambda j=j: jax.block_until_ready(j(u0, kappa))) for lanes, j in jac.items()}
            yield ("jax", kind, k) + ratios(run[True], run[False], rounds)


def torch_rows(ks, steps, rounds):
    import torch
    from enzyme_py.torch import kernel_op
    for k in ks:
        u0 = torch.sin(torch.linspace(0, np.pi, k, dtype=torch.float64))
        kappa = torch.full((k,), 0.2, dtype=torch.float64)
        op = kernel_op(heat, ["inout", "in", int])
        f = lambda u, c: op(u, c, steps)      # noqa: E731

        def run(kind, lanes):
            op.lanes = lanes
            getattr(torch.func, kind)(f, argnums=(0, 1))(u0, kappa)
        for kind in ("jacrev", "jacfwd"):
            yield ("torch", kind, k) + ratios(lambda: run(kind, True), lambda: run(kind, False), rounds)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--sizes", default="8,16,32,64")
    args = ap.parse_args(argv)
    ks = [int(k) for k in args.sizes.split(",")]
    print(f"heat in place, {args.steps} steps; ms per Jacobian (best), loop / batched (median of "
          f"{args.rounds} rounds)")
    print(f"{'':6} {'':7} {'k':>3} {'batched ms':>11} {'loop ms':>9} {'loop/batched':>13}")
    for rows in (jax_rows, torch_rows):
        try:
            for fw, kind, k, r, tb, tl in rows(ks, args.steps, args.rounds):
                print(f"{fw:6} {kind:7} {k:3d} {tb:11.2f} {tl:9.2f} {r:13.2f}", flush=True)
        except ImportError as exc:
            print(f"skipped: {exc}")


if __name__ == "__main__":
    main()
