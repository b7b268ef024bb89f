"""LAPACK calls inside kernels (rules/lapack.py): `np.linalg.solve` against finite differences in
reverse and forward mode (fd_modes.py), with one and several right-hand sides, C and Fortran
order, float32 and float64; cholesky, slogdet, det, inv, eigh and eigvalsh the same way (svd, qr
and lstsq: test_linalg_svd_qr.py); eig and eigvals are refused with a message that names them."""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, Forward, UnsupportedError, autodiff
from fd_modes import check_modes


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


def spd(r, n, dtype, order="C"):
    m = r.uniform(-1, 1, (n, n))
    a = (m @ m.T + n * np.eye(n)).astype(dtype)
    return np.asfortranarray(a) if order == "F" else a


def vec(r, shape, dtype):
    return r.uniform(-1, 1, shape).astype(dtype)


# each order with one dtype: both orders and both dtypes are covered at half the compiles
LAYOUTS = [("C", np.float64), ("F", np.float32)]


@pytest.mark.parametrize("order,dtype", LAYOUTS)
def test_solve_vector(order, dtype):
    r = np.random.default_rng(1)
    A = spd(r, 4, dtype, order) + vec(r, (4, 4), dtype)     # not symmetric
    check_modes(solve_sum, A, vec(r, 4, dtype))


def test_solve_matrix_rhs():
    # float64 only: the single-precision routines are test_solve_vector's (F, float32) case
    r = np.random.default_rng(2)
    check_modes(solve_matrix, spd(r, 3, np.float64) + vec(r, (3, 3), np.float64),
                vec(r, (3, 2), np.float64))


def test_gaussian_quadratic_form():
    r = np.random.default_rng(3)
    check_modes(gaussian_loglik, spd(r, 5, np.float64), vec(r, 5, np.float64))


@njit
def logdet(A):
    return np.linalg.slogdet(A)[1]


@njit
def eigh_use(A, c, W):
    # sign-invariant in the eigenvectors (LAPACK picks each one's sign)
    w, V = np.linalg.eigh(A)
    return np.sum(w * c) + np.sum(W * V * V)


@njit
def eigvalsh_use(A, c):
    return np.sum(np.linalg.eigvalsh(A) * c)


@njit
def eig_sum(A):
    return np.sum(np.linalg.eigvals(A).real)


@njit
def inv_sum(A):
    return np.sum(np.linalg.inv(A))


@pytest.mark.parametrize("kernel,words", [(eig_sum, "complex matrices only")])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_refused_with_the_function_named(kernel, words, mode):
    A = spd(np.random.default_rng(4), 3, np.float64)
    kw = {"seed": 1.0} if mode == "reverse" else {"mode": Forward}
    with pytest.raises(UnsupportedError, match=words):
        autodiff(kernel, Duplicated(A, np.ones_like(A)), **kw)


@njit
def chol_weighted(A, W):
    return np.sum(np.linalg.cholesky(A) * W)


@njit
def gaussian_nll(S, r):
    # -log N(r; 0, S) up to a constant, as Numba users write it: cholesky, then a solve
    L = np.linalg.cholesky(S)
    z = np.linalg.solve(L, r)
    return 0.5 * np.dot(z, z) + np.sum(np.log(np.diag(L)))


@pytest.mark.parametrize("order,dtype", LAYOUTS)
def test_cholesky(order, dtype):
    r = np.random.default_rng(5)
    check_modes(chol_weighted, spd(r, 4, dtype, order), vec(r, (4, 4), dtype))


def test_gaussian_negative_log_likelihood():
    # float64 only: cholesky and solve in single precision are the (F, float32) cases above
    r = np.random.default_rng(6)
    check_modes(gaussian_nll, spd(r, 5, np.float64), vec(r, 5, np.float64))


@njit
def det_of(A):
    return np.linalg.det(A)


@njit
def packed_lu_use(A, W):
    # log|det| and the sign through slogdet, and det: each a getrf of a copy
    s, ld = np.linalg.slogdet(A)
    return ld + s * np.sum(W * A) + np.linalg.det(A) ** 2


@pytest.mark.parametrize("order,dtype", LAYOUTS)
def test_slogdet_and_det(order, dtype):
    r = np.random.default_rng(7)
    A = spd(r, 4, dtype, order) + vec(r, (4, 4), dtype)     # pivoting happens
    A = np.asfortranarray(A) if order == "F" else A
    # slogdet's log and sign and det in one kernel (logdet alone: the test below; det alone:
    # test_det_alone)
    check_modes(packed_lu_use, A, vec(r, (4, 4), dtype))


def test_slogdet_needs_pivoting():
    A = np.array([[0.1, 2.0, 0.5], [3.0, 0.2, 1.0], [1.0, 1.0, 4.0]])   # row interchanges
    check_modes(logdet, A)


def test_det_alone():
    A = np.array([[0.1, 2.0, 0.5], [3.0, 0.2, 1.0], [1.0, 1.0, 4.0]])
    check_modes(det_of, A * 0.5)


@njit
def inv_weighted(A, W):
    return np.sum(np.linalg.inv(A) * W)


@njit
def precision_quadratic(S, r):
    P = np.linalg.inv(S)
    return r @ P @ r


@pytest.mark.parametrize("order,dtype", LAYOUTS)
def test_inv(order, dtype):
    r = np.random.default_rng(8)
    A = spd(r, 4, dtype) + vec(r, (4, 4), dtype)
    A = np.asfortranarray(A) if order == "F" else A
    check_modes(inv_weighted, A, vec(r, (4, 4), dtype))
    check_modes(precision_quadratic, spd(r, 3, dtype, order), vec(r, 3, dtype))


@pytest.mark.parametrize("order,dtype", LAYOUTS)
def test_eigh_and_eigvalsh(order, dtype):
    r = np.random.default_rng(9)
    A = spd(r, 4, dtype, order) + np.diag(np.arange(4.0)).astype(dtype)   # distinct eigenvalues
    A = np.asfortranarray(A) if order == "F" else A
    check_modes(eigh_use, A, vec(r, 4, dtype), vec(r, (4, 4), dtype))
    check_modes(eigvalsh_use, A, vec(r, 4, dtype))


@njit
def eigenvectors_weighted(A):
    return np.sum(np.linalg.eigh(A)[1] * np.arange(9.0).reshape(3, 3))


def test_repeated_eigenvalues():
    """eigvalsh stays finite (the eigenvalues' derivative is V diag(c) V^T, exact for equal
    weights on the repeated ones); eigh's eigenvector derivative is undefined: inf or nan."""
    A = np.eye(3) * 2.0
    c = np.ones(3)
    dA = np.zeros_like(A)
    autodiff(eigvalsh_use, Duplicated(A.copy(), dA), Duplicated(c, np.zeros(3)), seed=1.0)
    np.testing.assert_allclose(np.tril(dA), np.eye(3), atol=1e-12)    # d trace(A) / dA
    dA = np.zeros_like(A)
    autodiff(eigenvectors_weighted, Duplicated(A.copy(), dA), seed=1.0)
    assert not np.all(np.isfinite(dA))
