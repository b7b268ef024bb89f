"""Sparse Jacobians: enzyme_py's SparseJacobian (pattern found from the IR) against JAX +
sparsejac (pattern given by hand), measured in one run.

    python -m benchmarks.sparse_jax [--grid 256] [--chain 100000] [--rounds 5]

Problems: the 2-D PDE residual of benchmarks/sparse.py (5-point Laplacian plus exp(u) - u^2 on
a grid x grid mesh, zero boundary) and a chain residual (y_i = x_{i-1} - 2 x_i + x_{i+1} +
x_i^3, tridiagonal), both in float64. Per problem and tool:

- first call: from nothing in this process to the first Jacobian. enzyme_py: a new
  SparseJacobian's first call (the tangent functions are built, or loaded from enzyme_py's disk
  cache when it is on; the pattern is found, coloured, and the Jacobian evaluated). JAX:
  `sparsejac.jacfwd(f, sparsity)` (its colouring, networkx's greedy), jax.jit, and the first
  call (trace, XLA compile, run).
- per call: the best of --rounds calls once everything is built (JAX: block_until_ready).

sparsejac is a benchmark extra (`pip install sparsejac`; it needs networkx), not a dependency
of enzyme_py; without it (or without jax) the JAX columns print "-".
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
from numba import njit

from enzyme_py import SparseJacobian

from .sparse import residual as pde     # the 2-D PDE residual of benchmarks/sparse.py


@njit
def chain(x, out):
    n = x.size
    for i in range(n):
        s = -2.0 * x[i] + x[i] ** 3
        if i > 0:
            s += x[i - 1]
        if i < n - 1:
            s += x[i + 1]
        out[i] = s


def jax_pde(n, h):
    import jax.numpy as jnp

    def f(flat):
        u = flat.reshape(n, n)
        p = jnp.pad(u, 1)
        lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4.0 * u
        return (lap / (h * h) + jnp.exp(u) - u * u).ravel()
    return f


def jax_chain(x):
    import jax.numpy as jnp
    p = jnp.pad(x, 1)
    return p[:-2] - 2.0 * x + p[2:] + x ** 3


def best(fn, rounds):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def enzyme_row(kernel, x, const, out, rounds):
    J = SparseJacobian(kernel)
    t = time.perf_counter()
    S = J(x, *const, out=out)
    first = time.perf_counter() - t
    per = best(lambda: J(x, *const, out=out), rounds)
    return S, J, first, per


def jax_row(fn, x, pattern, rounds):
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import sparsejac
    except ImportError as exc:
        return None, f"{exc}"
    t = time.perf_counter()
    sparsity = _bcoo(pattern)
    jac = jax.jit(sparsejac.jacfwd(fn, sparsity=sparsity))
    xj = jnp.asarray(x.ravel())
    B = jac(xj)
    B.data.block_until_ready()
    first = time.perf_counter() - t
    per = best(lambda: jac(xj).data.block_until_ready(), rounds)
    S = sp.csr_matrix((np.asarray(B.data), (np.asarray(B.indices[:, 0]), np.asarray(B.indices[:, 1]))),
                      shape=B.shape)
    return (S, first, per), None


def _bcoo(pattern):
    import jax.experimental.sparse as jsparse
    import jax.numpy as jnp
    coo = sp.coo_matrix(pattern)
    indices = jnp.stack([jnp.asarray(coo.row), jnp.asarray(coo.col)], axis=1)
    return jsparse.BCOO((jnp.ones(coo.nnz), indices), shape=coo.shape)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", type=int, default=256)
    ap.add_argument("--chain", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    n = a.grid
    u, h = rng.random((n, n)), 1.0 / (n + 1)
    x = rng.random(a.chain)
    problems = [(f"PDE {n}x{n}", pde, u, (h,), np.zeros((n, n)), jax_pde(n, h)),
                (f"chain {a.chain}", chain, x, (), np.zeros(a.chain), jax_chain)]
    print(f"{'problem':>14} {'nnz':>8} {'colours':>7} {'enzyme first s':>14} {'jax first s':>11} "
          f"{'enzyme ms':>9} {'jax ms':>8} {'per-call ratio':>14} {'max diff':>9}")
    for name, kernel, xv, const, out, fn in problems:
        S, J, first, per = enzyme_row(kernel, xv, const, out, a.rounds)
        got, why = jax_row(fn, xv, J.pattern, a.rounds)
        if got is None:
            print(f"{name:>14} {S.nnz:>8} {J.ncolours:>7} {first:14.2f} {'-':>11} "
                  f"{1e3 * per:9.2f} {'-':>8} {'-':>14} {'-':>9}   (JAX: {why})")
            continue
        Sj, jfirst, jper = got
        diff = abs(S - Sj).max()
        print(f"{name:>14} {S.nnz:>8} {J.ncolours:>7} {first:14.2f} {jfirst:11.2f} "
              f"{1e3 * per:9.2f} {1e3 * jper:8.2f} {per / jper:14.2f} {diff:9.1e}")


if __name__ == "__main__":
    main()
