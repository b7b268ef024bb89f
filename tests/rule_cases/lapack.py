"""Cases of rules/lapack.py: gesv (`np.linalg.solve`), with one and several right-hand sides, C
and Fortran order, float32 and float64."""
import numpy as np
from numba import njit

from . import DTYPES, LAYOUTS, Case, spd, vec


@njit
def solve_sum(A, b):
    x = np.linalg.solve(A, b)
    return np.sum(x * x)


@njit
def solve_matrix(A, B):
    X = np.linalg.solve(A, B)
    return np.sum(np.sin(X))


@njit
def gaussian_loglik(S, r):
    # quadratic form of a covariance through a solve
    return -0.5 * np.dot(r, np.linalg.solve(S, r))


def _solve_vector(order, dtype):
    r = np.random.default_rng(1)
    A = spd(r, 4, dtype, order) + vec(r, (4, 4), dtype)     # not symmetric
    return A, vec(r, 4, dtype)


def _solve_matrix(dtype):
    r = np.random.default_rng(2)
    return spd(r, 3, dtype) + vec(r, (3, 3), dtype), vec(r, (3, 2), dtype)


def _quadratic_form():
    r = np.random.default_rng(3)
    return spd(r, 5, np.float64), vec(r, 5, np.float64)


CASES = [Case(f"solve_vector-{o}-{np.dtype(d).name}", solve_sum, lambda o=o, d=d: _solve_vector(o, d))
         for o, d in LAYOUTS] + \
        [Case(f"solve_matrix-{np.dtype(d).name}", solve_matrix, lambda d=d: _solve_matrix(d)) for d in DTYPES] + \
        [Case("gaussian_quadratic_form", gaussian_loglik, _quadratic_form)]
