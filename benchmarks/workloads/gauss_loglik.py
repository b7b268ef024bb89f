"""Workload: the Gaussian log-likelihood of a batch of observations under one covariance,
through `np.linalg.cholesky` and `np.linalg.solve` (LAPACK potrf and gesv records,
ir_passes/rules/lapack.py).

    S = A A^T + n I;  L = cholesky(S);  Z = solve(L, X - mu)
    loglik = -0.5 sum(Z * Z) - m sum(log diag L) - m n/2 log(2 pi)

n = 32 dimensions, m = 256 observations. Gradient w.r.t. A, mu and X.
"""
import math

import numpy as np
from numba import njit

from ..harness import Arg, Instance

NAME = "gauss_loglik"
TITLE = "Gaussian log-lik (cholesky, solve)"


@njit
def kernel(A, mu, X):
    n, m = X.shape
    S = A @ A.T + n * np.eye(n)
    L = np.linalg.cholesky(S)
    R = X - mu.reshape((n, 1))
    Z = np.linalg.solve(L, R)
    return -0.5 * np.sum(Z * Z) - m * np.sum(np.log(np.diag(L))) - 0.5 * m * n * math.log(2 * math.pi)


def setup(quick=False, n=32, m=256):
    if quick:
        n, m = 8, 32
    rng = np.random.default_rng(5)
    A = rng.standard_normal((n, n)) / math.sqrt(n)
    mu = rng.standard_normal(n)
    X = rng.standard_normal((n, m))
    args = [Arg("dup", A, name="A"), Arg("dup", mu, name="mu"), Arg("dup", X, name="X")]
    return Instance(kernel, args, note=f"n={n} m={m}")


def jax_setup(inst):
    import jax
    import jax.numpy as jnp
    A, mu, X = (jnp.asarray(a.init) for a in inst.spec)
    n, m = X.shape

    def f(A, mu, X):
        S = A @ A.T + n * jnp.eye(n)
        L = jnp.linalg.cholesky(S)
        Z = jax.scipy.linalg.solve_triangular(L, X - mu[:, None], lower=True)
        return -0.5 * jnp.sum(Z * Z) - m * jnp.sum(jnp.log(jnp.diag(L))) \
            - 0.5 * m * n * math.log(2 * math.pi)
    fwd = jax.jit(f)
    g = jax.jit(jax.grad(f, argnums=(0, 1, 2)))

    def result():
        return np.concatenate([np.asarray(r).ravel() for r in g(A, mu, X)])
    return (lambda: fwd(A, mu, X).block_until_ready()), \
        (lambda: jax.block_until_ready(g(A, mu, X))), result
