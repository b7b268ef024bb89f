"""gmm: the log-likelihood of a Gaussian mixture with a Wishart prior (GradBench's definition:
q holds the log-diagonals, l the strict lower triangles of the inverse-covariance factors; the
C++ tools' gmm.hpp), written as Numba loops, and its gradient in every parameter by one
reverse-mode call."""
import math

import numpy as np
from numba import njit

from enzyme_py import Const, Duplicated, autodiff

from ...workloads.gmm import logsumexp as _logsumexp
from .protocol import Function


@njit
def _log_gamma_distrib(a, p):
    out = 0.25 * p * (p - 1) * math.log(math.pi)
    for j in range(1, p + 1):
        out += math.lgamma(a + 0.5 * (1 - j))
    return out


@njit
def objective(alpha, mu, q, l, x, gamma, m):
    n, d = x.shape
    k = alpha.shape[0]
    qdiag = np.exp(q)
    sum_qs = np.sum(q, axis=1)
    xc = np.empty(d)
    qx = np.empty(d)
    main_term = np.empty(k)
    slse = 0.0
    for ix in range(n):
        for ik in range(k):
            for j in range(d):
                xc[j] = x[ix, j] - mu[ik, j]
                qx[j] = qdiag[ik, j] * xc[j]
            li = 0
            for i in range(d):
                for j in range(i + 1, d):
                    qx[j] += l[ik, li] * xc[i]
                    li += 1
            sq = 0.0
            for j in range(d):
                sq += qx[j] * qx[j]
            main_term[ik] = alpha[ik] + sum_qs[ik] - 0.5 * sq
        slse += _logsumexp(main_term)
    nn = d + m + 1
    c = nn * d * (math.log(gamma) - 0.5 * math.log(2.0)) - _log_gamma_distrib(0.5 * nn, d)
    prior = 0.0
    for ik in range(k):
        frob = 0.0
        for j in range(d):
            frob += qdiag[ik, j] * qdiag[ik, j]
        for j in range(l.shape[1]):
            frob += l[ik, j] * l[ik, j]
        prior += 0.5 * gamma * gamma * frob - m * sum_qs[ik]
    constant = -n * d * 0.5 * math.log(2.0 * math.pi)
    return constant + slse - n * _logsumexp(alpha) - prior + k * c


@njit
def jacobian(alpha, mu, q, l, x, gamma, m):
    da, dmu, dq, dl = (np.zeros_like(alpha), np.zeros_like(mu), np.zeros_like(q),
                       np.zeros_like(l))
    autodiff(objective, Duplicated(alpha, da), Duplicated(mu, dmu), Duplicated(q, dq),
             Duplicated(l, dl), Const(x), Const(gamma), Const(m))
    return da, dmu, dq, dl


def prepare(raw):
    d = int(raw["d"])
    f = np.float64
    return (np.array(raw["alpha"], f), np.array(raw["mu"], f).reshape(-1, d),
            np.array(raw["q"], f).reshape(-1, d),
            np.array(raw["l"], f).reshape(-1, d * (d - 1) // 2),
            np.array(raw["x"], f).reshape(-1, d), float(raw["gamma"]), int(raw["m"]))


def post_jacobian(out):
    da, dmu, dq, dl = out
    return {"alpha": da.tolist(), "mu": dmu.tolist(), "q": dq.tolist(), "l": dl.tolist()}


FUNCTIONS = {
    "objective": Function(prepare, objective),
    "jacobian": Function(prepare, jacobian, post=post_jacobian),
}
