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


def torch_setup(inst):
    """Anti-diagonal by anti-diagonal (the cells of one diagonal are independent), with a
    large finite value standing in for inf so that no masked cell makes a NaN gradient."""
    import torch
    D0 = torch.from_numpy(inst.spec[0].init.copy())
    gamma = inst.spec[1].init
    m, n = D0.shape
    BIG = 1e10
    rows = torch.arange(1, m + 1)
    diags = []                       # per k = i + j: (valid mask, flat index into D)
    for k in range(2, m + n + 1):
        cols = k - rows
        valid = (cols >= 1) & (cols <= n)
        idx = (rows - 1) * n + (cols.clamp(1, n) - 1)
        diags.append((valid, idx))

    def f(D):
        flat = D.reshape(-1)
        big = torch.full((m + 1,), BIG, dtype=D.dtype)
        d2 = torch.cat([torch.zeros(1, dtype=D.dtype), big[1:]])     # k = 0: R[0, 0] = 0
        d1 = big                                                      # k = 1: R[0,1], R[1,0]
        for valid, idx in diags:
            a, b, c = d2[:-1], d1[:-1], d1[1:]     # R[i-1,j-1], R[i-1,j], R[i,j-1]
            soft = -gamma * torch.logsumexp(torch.stack([-a, -b, -c]) / gamma, dim=0)
            cur = torch.where(valid, flat[idx] + soft, BIG)
            d2, d1 = d1, torch.cat([big[:1], cur])
        return d1[m]

    def fwd():
        with torch.no_grad():
            return f(D0)

    def grad():
        D = D0.detach().requires_grad_(True)
        return torch.autograd.grad(f(D), D)[0]
    return fwd, grad, (lambda: grad().numpy().ravel())


def warp_setup(inst):
    import warp as wp
    from ._warp_kernels import softdtw_diag
    D0 = inst.spec[0].init
    gamma = float(inst.spec[1].init)
    m, n = D0.shape
    R0 = np.full((m + 1, n + 1), np.inf)
    R0[0, 0] = 0.0
    D = wp.array(D0, dtype=wp.float64, device="cpu", requires_grad=True)
    R = wp.array(R0, dtype=wp.float64, device="cpu", requires_grad=True)
    R_init = wp.array(R0, dtype=wp.float64, device="cpu")
    seed = np.zeros((m + 1, n + 1))
    seed[m, n] = 1.0
    seed = wp.array(seed, dtype=wp.float64, device="cpu")

    def forward():
        # every cell is written once, by the launch of its anti-diagonal
        wp.copy(R, R_init)
        for k in range(2, m + n + 1):
            wp.launch(softdtw_diag, dim=m, inputs=[D, wp.float64(gamma), k], outputs=[R],
                      device="cpu")

    tape = wp.Tape()

    def grad():
        tape.reset()                   # drops the recorded launches, zeroes the gradients
        with tape:
            forward()
        tape.backward(grads={R: seed})

    def result():
        grad()
        return D.grad.numpy().ravel().copy()
    return forward, grad, result
