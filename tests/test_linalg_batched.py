"""Batched forward mode (several tangent directions in one call) through the BLAS records
(gemm, gemv, dot, nrm2; rules/blas.py) and the LAPACK records (gesv, potrf, getrf, getri,
syevd; rules/lapack.py), three tangent directions in one call: each lane against its own central
difference (fd_modes.check_batched_forward). The records loop over the lanes with nothing special
to any width, so width 3 checks what width 2 would (its lanes 0 and 1) and an odd lane count."""
import numpy as np
import pytest
from numba import njit

from fd_modes import check_batched_forward


@njit
def matmul_into(A, B, C):
    C[:] = A @ B                                # gemm into an output


@njit
def gram_plus_matvec(M, x):
    G = M @ M.T                                 # gemm with a transpose
    y = G @ x                                   # gemv
    return np.sum(np.sin(y)) + np.sum(G * G)


@njit
def vecmat_dot_norm(x, A, z):
    y = x @ A                                   # gemv, transposed
    return np.dot(y, z) * np.linalg.norm(y) + np.vdot(x, x)   # dot, nrm2


@njit
def solve_both(A, b, B):
    x = np.linalg.solve(A, b)                   # gesv, one right-hand side
    X = np.linalg.solve(A, B)                   # gesv, several
    return np.sum(x * x) + np.sum(np.cos(X))


@njit
def gaussian_nll(S, r):
    L = np.linalg.cholesky(S)                   # potrf
    z = np.linalg.solve(L, r)
    return 0.5 * np.dot(z, z) + np.sum(np.log(np.diag(L)))


@njit
def determinants(A, W):
    s, ld = np.linalg.slogdet(A)                # getrf
    return ld + s * np.sum(W * A) + np.linalg.det(A) ** 2


@njit
def inverse_weighted(A, W):
    return np.sum(np.linalg.inv(A) * W)         # getrf + getri


@njit
def eigen(A, c, W):
    w, V = np.linalg.eigh(A)                    # syevd; sign-invariant in the eigenvectors
    return np.sum(w * c) + np.sum(W * V * V) + np.sum(np.linalg.eigvalsh(A) ** 2)


def mat(r, shape, dtype, order="C"):
    a = np.asarray(r.uniform(-1, 1, shape), dtype=dtype)
    return np.asfortranarray(a) if order == "F" else a


def spd(r, n, dtype, order="C"):
    m = r.uniform(-1, 1, (n, n))
    return np.asarray(m @ m.T + n * np.eye(n), dtype=dtype, order=order)


WIDTH = 3


def _rtol(dtype):
    return 1e-6 if dtype == np.float64 else 2e-3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gemm_into_output(dtype):
    r = np.random.default_rng(1)
    check_batched_forward(matmul_into, mat(r, (3, 4), dtype), mat(r, (4, 5), dtype, "F"),
                          mat(r, (3, 5), dtype), width=WIDTH, rtol=_rtol(dtype))


def test_gemm_transposed_and_gemv():
    r = np.random.default_rng(2)
    check_batched_forward(gram_plus_matvec, mat(r, (3, 5), np.float64), mat(r, 3, np.float64),
                          width=WIDTH)


@pytest.mark.parametrize("order", ["C", "F"])
def test_gemv_dot_nrm2(order):
    r = np.random.default_rng(3)
    check_batched_forward(vecmat_dot_norm, mat(r, 4, np.float64), mat(r, (4, 3), np.float64, order),
                          mat(r, 3, np.float64), width=WIDTH)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gesv(dtype):
    r = np.random.default_rng(4)
    A = spd(r, 4, dtype) + mat(r, (4, 4), dtype)        # not symmetric
    check_batched_forward(solve_both, A, mat(r, 4, dtype), mat(r, (4, 2), dtype), width=WIDTH,
                          rtol=_rtol(dtype))


def test_potrf():
    r = np.random.default_rng(5)
    check_batched_forward(gaussian_nll, spd(r, 4, np.float64, "F"), mat(r, 4, np.float64),
                          width=WIDTH)


def test_getrf_det_slogdet():
    r = np.random.default_rng(6)
    A = spd(r, 4, np.float64) * 0.3 + mat(r, (4, 4), np.float64)
    check_batched_forward(determinants, A, mat(r, (4, 4), np.float64), width=WIDTH)


@pytest.mark.parametrize("order", ["C", "F"])
def test_getri_inv(order):
    r = np.random.default_rng(7)
    A = spd(r, 4, np.float64, order) + mat(r, (4, 4), np.float64)
    check_batched_forward(inverse_weighted, A, mat(r, (4, 4), np.float64), width=WIDTH)


def test_syevd():
    r = np.random.default_rng(8)
    A = spd(r, 4, np.float64) + np.diag([0.0, 1.0, 3.0, 6.0])     # well separated eigenvalues
    check_batched_forward(eigen, A, mat(r, 4, np.float64), mat(r, (4, 4), np.float64),
                          width=WIDTH)
