"""Workload 8: soft-DTW (Cuturi & Blondel 2017) of a 256 x 256 cost matrix.

    R[0,0] = 0, R[0,j] = R[i,0] = inf;  R[i,j] = D[i-1,j-1] + softmin_gamma(R[i-1,j-1],
    R[i-1,j], R[i,j-1]);  return R[m,n]

The DP table R is filled in place (a Duplicated argument). Derivative w.r.t. D (gamma is
Const). The hand adjoint is the Cuturi-Blondel backward recursion on the filled table,
E[i,j] = sum over the three successors of E[succ] * exp((R[succ] - D[succ] - R[i,j]) / gamma).
"""
import math

import numpy as np
from numba import njit

from ..harness import Arg, Hand, Instance

NAME = "softdtw"
TITLE = "soft-DTW 256x256"


@njit
def kernel(D, gamma, R):
    m, n = D.shape
    R[0, 0] = 0.0
    for j in range(1, n + 1):
        R[0, j] = np.inf
    for i in range(1, m + 1):
        R[i, 0] = np.inf
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            r0 = -R[i - 1, j - 1] / gamma
            r1 = -R[i - 1, j] / gamma
            r2 = -R[i, j - 1] / gamma
            rmax = max(max(r0, r1), r2)
            rsum = math.exp(r0 - rmax) + math.exp(r1 - rmax) + math.exp(r2 - rmax)
            softmin = -gamma * (math.log(rsum) + rmax)
            R[i, j] = D[i - 1, j - 1] + softmin
    return R[m, n]


@njit
def hand_adjoint(D, gamma, R, dD, E):
    """Forward (fills R), then the backward recursion into E ((m+1) x (n+1) scratch);
    adds dR[m,n]/dD into dD. Returns R[m, n]."""
    m, n = D.shape
    out = kernel(D, gamma, R)
    for i in range(m, 0, -1):
        for j in range(n, 0, -1):
            if i == m and j == n:
                e = 1.0
            else:
                e = 0.0
                rij = R[i, j]
                if i < m:
                    e += E[i + 1, j] * math.exp((R[i + 1, j] - D[i, j - 1] - rij) / gamma)
                if j < n:
                    e += E[i, j + 1] * math.exp((R[i, j + 1] - D[i - 1, j] - rij) / gamma)
                if i < m and j < n:
                    e += E[i + 1, j + 1] * math.exp((R[i + 1, j + 1] - D[i, j] - rij) / gamma)
            E[i, j] = e
            dD[i - 1, j - 1] += e
    return out


def setup(quick=False, m=None, n=None):
    m = m or (32 if quick else 256)
    n = n or m
    rng = np.random.default_rng(8)
    a = rng.standard_normal((m, 3))
    b = rng.standard_normal((n, 3))
    D = ((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2)
    gamma = 1.0
    args = [Arg("dup", D, name="D"), Arg("const", gamma, name="gamma"),
            Arg("dup", np.zeros((m + 1, n + 1)), wrt=False, name="R")]
    R, dD, E = np.zeros((m + 1, n + 1)), np.zeros_like(D), np.zeros((m + 1, n + 1))

    def reset():
        dD.fill(0.0)

    return Instance(kernel, args, hand=Hand(lambda: hand_adjoint(D, gamma, R, dD, E), reset,
                                             lambda: dD.copy()),
                    note=f"{m}x{n}")


def jax_setup(inst):
    import jax
    import jax.numpy as jnp
    D = jnp.asarray(inst.spec[0].init)
    gamma = inst.spec[1].init
    m, n = D.shape

    def softmin(a, b, c):
        return -gamma * jax.nn.logsumexp(jnp.stack([-a, -b, -c]) / gamma, axis=0)

    def f(D):
        # row by row: R[i, j] = D[i-1, j-1] + softmin(prev[j-1], prev[j], cur[j-1])
        first = jnp.concatenate([jnp.zeros(1), jnp.full(n, jnp.inf)])

        def row(prev, d):
            def cell(left, k):
                v = d[k] + softmin(prev[k], prev[k + 1], left)
                return v, v
            _, vals = jax.lax.scan(cell, jnp.inf, jnp.arange(n))
            cur = jnp.concatenate([jnp.full(1, jnp.inf), vals])
            return cur, None
        last, _ = jax.lax.scan(row, first, D)
        return last[n]
    fwd = jax.jit(f)
    g = jax.jit(jax.grad(f))
    return (lambda: fwd(D).block_until_ready()), (lambda: g(D).block_until_ready()), \
        (lambda: np.asarray(g(D)).ravel())
