"""Cases of rules/lapack_lu.py: potrf (`np.linalg.cholesky`), getrf (`slogdet`, `det`, with
pivoting) and getri (`inv`), C and Fortran order, float32 and float64."""
import numpy as np
from numba import njit

from . import LAYOUTS, Case, spd, vec


@njit
def chol_weighted(A, W):
    return np.sum(np.linalg.cholesky(A) * W)


@njit
def gaussian_nll(S, r):
    # -log N(r; 0, S) up to a constant, as Numba users write it: cholesky, then a solve
    L = np.linalg.cholesky(S)
    z = np.linalg.solve(L, r)
    return 0.5 * np.dot(z, z) + np.sum(np.log(np.diag(L)))


@njit
def logdet(A):
    return np.linalg.slogdet(A)[1]


@njit
def det_of(A):
    return np.linalg.det(A)


@njit
def packed_lu_use(A, W):
    # log|det| and the sign through slogdet, and det: each a getrf of a copy
    s, ld = np.linalg.slogdet(A)
    return ld + s * np.sum(W * A) + np.linalg.det(A) ** 2


@njit
def inv_weighted(A, W):
    return np.sum(np.linalg.inv(A) * W)


@njit
def precision_quadratic(S, r):
    P = np.linalg.inv(S)
    return r @ P @ r


PIVOTING = np.array([[0.1, 2.0, 0.5], [3.0, 0.2, 1.0], [1.0, 1.0, 4.0]])   # row interchanges


def _cholesky(order, dtype):
    r = np.random.default_rng(5)
    return spd(r, 4, dtype, order), vec(r, (4, 4), dtype)


def _nll(dtype):
    r = np.random.default_rng(6)
    return spd(r, 5, dtype), vec(r, 5, dtype)


def _packed(order, dtype):
    r = np.random.default_rng(7)
    A = spd(r, 4, dtype, order) + vec(r, (4, 4), dtype)     # pivoting happens
    A = np.asfortranarray(A) if order == "F" else A
    return A, vec(r, (4, 4), dtype)


def _inv(order, dtype, quadratic=False):
    r = np.random.default_rng(8)
    A = spd(r, 4, dtype) + vec(r, (4, 4), dtype)
    A = np.asfortranarray(A) if order == "F" else A
    W = vec(r, (4, 4), dtype)
    return (spd(r, 3, dtype, order), vec(r, 3, dtype)) if quadratic else (A, W)


def _name(case, order, dtype):
    return f"{case}-{order}-{np.dtype(dtype).name}"


CASES = [Case(_name("cholesky", o, d), chol_weighted, lambda o=o, d=d: _cholesky(o, d)) for o, d in LAYOUTS] + \
        [Case("gaussian_nll-float64", gaussian_nll, lambda: _nll(np.float64))] + \
        [Case(_name("slogdet_and_det", o, d), packed_lu_use, lambda o=o, d=d: _packed(o, d)) for o, d in LAYOUTS] + \
        [Case("slogdet_needs_pivoting", logdet, lambda: (PIVOTING.copy(),)),
         Case("det_alone", det_of, lambda: (PIVOTING * 0.5,))] + \
        [Case(_name("inv", o, d), inv_weighted, lambda o=o, d=d: _inv(o, d)) for o, d in LAYOUTS] + \
        [Case(_name("precision_quadratic", o, d), precision_quadratic, lambda o=o, d=d: _inv(o, d, True))
         for o, d in LAYOUTS]
