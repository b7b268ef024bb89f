"""det: the determinant of an ell x ell matrix by expansion in minors (the C++ tools' det.hpp,
after cmpad: rows and columns removed through successor lists, a recursive function), and its
gradient by one reverse call."""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, autodiff

from .protocol import Function


@njit
def det_of_minor(A, n, m, r, c):
    R0 = r[n]
    Cj = c[n]
    if m == 1:
        return A[R0 * n + Cj]
    detM = 0.0
    sign = 1
    r[n] = r[R0]
    Cj1 = n
    for _ in range(m):
        M0j = A[R0 * n + Cj]
        c[Cj1] = c[Cj]
        detS = det_of_minor(A, n, m - 1, r, c)
        c[Cj1] = Cj
        if sign > 0:
            detM = detM + M0j * detS
        else:
            detM = detM - M0j * detS
        Cj1 = Cj
        Cj = c[Cj]
        sign = -sign
    r[n] = R0
    return detM


@njit
def determinant(A, ell):
    r = np.empty(ell + 1, np.int64)
    c = np.empty(ell + 1, np.int64)
    for i in range(ell):
        r[i] = i + 1
        c[i] = i + 1
    r[ell] = 0
    c[ell] = 0
    return det_of_minor(A, ell, ell, r, c)


@njit
def gradient(A, ell):
    dA = np.zeros_like(A)
    autodiff(determinant, Duplicated(A, dA), ell)
    return dA


def prepare(raw):
    return np.array(raw["A"], dtype=np.float64), int(raw["ell"])


FUNCTIONS = {
    "primal": Function(prepare, determinant),
    "gradient": Function(prepare, gradient, post=lambda g: g.tolist()),
}
