"""Workload 4: ADBench GMM objective (d = 10, K = 25, the 10k-point file), full gradient.

A port of ADBench's C++ `gmm_objective` to Numba: explicit loops, the same temporaries
(Qdiags, sum_qs, xcentered, Qxcentered, main_term), logsumexp subtracting the max, lgamma
from math. Gradient order (ADBench): alphas (K), means (K x d), icf (K x d(d+1)/2).
"""
import math
import os

import numpy as np
from numba import njit

from ..harness import Arg, Instance
from . import DATA_DIR

NAME = "gmm"
TITLE = "ADBench GMM d=10 K=25 10k"

PI = 3.14159265359          # the constant ADBench's reference uses


# ---- reader ----------------------------------------------------------------------------

def read_gmm(path, replicate_point=True):
    """Read an ADBench GMM file: returns (alphas, means, icf, x, wishart_gamma, wishart_m).

    `d K n`, K alphas, K x d means, K x d(d+1)/2 icf, n x d points, `gamma m`. The 2.5M files
    hold one point, which is replicated n times."""
    with open(path) as f:
        tok = f.read().split()
    d, K, n = int(tok[0]), int(tok[1]), int(tok[2])
    pos = 3
    icf_sz = d * (d + 1) // 2

    def take(count):
        nonlocal pos
        out = np.array(tok[pos:pos + count], dtype=np.float64)
        pos += count
        return out
    alphas = take(K)
    means = take(K * d).reshape(K, d)
    icf = take(K * icf_sz).reshape(K, icf_sz)
    rest = len(tok) - pos
    if rest == n * d + 2:
        x = take(n * d).reshape(n, d)
    elif rest == d + 2 and replicate_point:
        x = np.tile(take(d), (n, 1))
    else:
        raise ValueError(f"{path}: {rest} values after icf, expected {n * d + 2} or {d + 2}")
    wishart_gamma = float(tok[pos])
    wishart_m = int(float(tok[pos + 1]))
    return alphas, means, icf, x, wishart_gamma, wishart_m


# ---- the objective ---------------------------------------------------------------------

@njit
def arr_max(v):
    m = v[0]
    for i in range(1, v.shape[0]):
        if v[i] > m:
            m = v[i]
    return m


@njit
def logsumexp(v):
    mx = arr_max(v)
    s = 0.0
    for i in range(v.shape[0]):
        s += math.exp(v[i] - mx)
    return math.log(s) + mx


@njit
def log_gamma_distrib(a, p):
    out = 0.25 * p * (p - 1) * math.log(PI)
    for j in range(1, p + 1):
        out += math.lgamma(a + 0.5 * (1 - j))
    return out


@njit
def gmm_objective(alphas, means, icf, x, wishart_gamma, wishart_m):
    n, d = x.shape
    K = alphas.shape[0]
    Qdiags = np.empty((K, d))
    sum_qs = np.empty(K)
    xcentered = np.empty(d)
    Qxcentered = np.empty(d)
    main_term = np.empty(K)

    for ik in range(K):
        s = 0.0
        for j in range(d):
            s += icf[ik, j]
            Qdiags[ik, j] = math.exp(icf[ik, j])
        sum_qs[ik] = s

    slse = 0.0
    for ix in range(n):
        for ik in range(K):
            for j in range(d):
                xcentered[j] = x[ix, j] - means[ik, j]
            # Qxcentered = Q_k xcentered, Q_k = diag(Qdiags[k]) + strictly lower L_k
            for j in range(d):
                Qxcentered[j] = Qdiags[ik, j] * xcentered[j]
            li = d
            for i in range(d):
                for j in range(i + 1, d):
                    Qxcentered[j] += icf[ik, li] * xcentered[i]
                    li += 1
            sq = 0.0
            for j in range(d):
                sq += Qxcentered[j] * Qxcentered[j]
            main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * sq
        slse += logsumexp(main_term)

    # log Wishart prior
    nn = d + wishart_m + 1
    prior = 0.0
    for ik in range(K):
        frob = 0.0
        for j in range(d):
            frob += Qdiags[ik, j] * Qdiags[ik, j]
        for j in range(d, icf.shape[1]):
            frob += icf[ik, j] * icf[ik, j]
        prior += 0.5 * wishart_gamma * wishart_gamma * frob - wishart_m * sum_qs[ik]
    C = nn * d * (math.log(wishart_gamma) - 0.5 * math.log(2.0)) \
        - log_gamma_distrib(0.5 * nn, d)
    prior -= K * C

    constant = -n * d * 0.5 * math.log(2.0 * PI)
    return constant + slse - n * logsumexp(alphas) + prior


kernel = gmm_objective


def instance_from(data, note=""):
    alphas, means, icf, x, gamma, m = data
    args = [Arg("dup", alphas, name="alphas"), Arg("dup", means, name="means"),
            Arg("dup", icf, name="icf"), Arg("const", x, name="x"),
            Arg("const", gamma, name="wishart_gamma"), Arg("const", m, name="wishart_m")]
    return Instance(gmm_objective, args, note=note)


def setup(quick=False):
    rel = "gmm/1k/gmm_d10_K5.txt" if quick else "gmm/10k/gmm_d10_K25.txt"
    return instance_from(read_gmm(os.path.join(DATA_DIR, rel)), note=rel)


def jax_setup(inst):
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import gammaln
    alphas, means, icf, x = (jnp.asarray(inst.spec[k].init) for k in range(4))
    gamma, wm = inst.spec[4].init, inst.spec[5].init
    K, d = means.shape
    n = x.shape[0]
    rows, cols = [], []
    for i in range(d):
        for j in range(i + 1, d):
            rows.append(j)
            cols.append(i)
    rows, cols = np.array(rows), np.array(cols)

    def f(alphas, means, icf):
        qs = icf[:, :d]
        Qd = jnp.exp(qs)
        sum_qs = jnp.sum(qs, axis=1)
        Ls = jnp.zeros((K, d, d)).at[:, rows, cols].set(icf[:, d:])
        Q = Ls + jax.vmap(jnp.diag)(Qd)
        xc = x[:, None, :] - means[None, :, :]
        Qx = jnp.einsum("kij,nkj->nki", Q, xc)
        main = alphas[None, :] + sum_qs[None, :] - 0.5 * jnp.sum(Qx * Qx, axis=2)
        slse = jnp.sum(jax.nn.logsumexp(main, axis=1))
        nn = d + wm + 1
        C = nn * d * (jnp.log(gamma) - 0.5 * jnp.log(2.0)) - (
            0.25 * d * (d - 1) * jnp.log(PI)
            + jnp.sum(gammaln(0.5 * nn + 0.5 * (1 - jnp.arange(1, d + 1)))))
        prior = jnp.sum(0.5 * gamma * gamma * (jnp.sum(Qd * Qd, axis=1)
                                               + jnp.sum(icf[:, d:] ** 2, axis=1))
                        - wm * sum_qs) - K * C
        return -n * d * 0.5 * jnp.log(2.0 * PI) + slse - n * jax.nn.logsumexp(alphas) + prior
    fwd = jax.jit(f)
    g = jax.jit(jax.grad(f, argnums=(0, 1, 2)))

    def result():
        return np.concatenate([np.asarray(r).ravel() for r in g(alphas, means, icf)])
    return (lambda: fwd(alphas, means, icf).block_until_ready()), \
        (lambda: jax.block_until_ready(g(alphas, means, icf))), result


def torch_setup(inst):
    import torch
    alphas0, means0, icf0, x = (torch.from_numpy(np.array(inst.spec[k].init, copy=True))
                                for k in range(4))
    gamma, wm = inst.spec[4].init, inst.spec[5].init
    K, d = means0.shape
    n = x.shape[0]
    rows, cols = [], []
    for i in range(d):
        for j in range(i + 1, d):
            rows.append(j)
            cols.append(i)
    rows, cols = torch.tensor(rows), torch.tensor(cols)
    nn = d + wm + 1
    C = nn * d * (math.log(gamma) - 0.5 * math.log(2.0)) - log_gamma_distrib(0.5 * nn, d)

    def f(alphas, means, icf):
        qs = icf[:, :d]
        Qd = torch.exp(qs)
        sum_qs = torch.sum(qs, dim=1)
        Ls = torch.zeros((K, d, d), dtype=icf.dtype)
        Ls[:, rows, cols] = icf[:, d:]
        Q = Ls + torch.diag_embed(Qd)
        xc = x[:, None, :] - means[None, :, :]
        Qx = torch.einsum("kij,nkj->nki", Q, xc)
        main = alphas[None, :] + sum_qs[None, :] - 0.5 * torch.sum(Qx * Qx, dim=2)
        slse = torch.sum(torch.logsumexp(main, dim=1))
        prior = torch.sum(0.5 * gamma * gamma * (torch.sum(Qd * Qd, dim=1)
                                                 + torch.sum(icf[:, d:] ** 2, dim=1))
                          - wm * sum_qs) - K * C
        return -n * d * 0.5 * math.log(2.0 * PI) + slse - n * torch.logsumexp(alphas, 0) \
            + prior

    def fwd():
        with torch.no_grad():
            return f(alphas0, means0, icf0)

    def grad():
        args = [a.detach().requires_grad_(True) for a in (alphas0, means0, icf0)]
        return torch.autograd.grad(f(*args), args)

    def result():
        return np.concatenate([g.numpy().ravel() for g in grad()])
    return fwd, grad, result
