"""The SVD (gesdd: np.linalg.svd, pinv, cond, matrix 2-norms), QR (geqrf + orgqr: np.linalg.qr)
and least-squares (gelsd: np.linalg.lstsq) records (rules/lapack_*.py) against finite
differences in reverse and forward mode (fd_modes.py): square, tall and wide matrices, C and
Fortran order, float32 and float64, batched forward calls; the cases without a derivative
(singular vectors of repeated or zero singular values, the columns full_matrices=True adds, a
rank-deficient least-squares problem) give inf or nan, as docs/linalg.md says."""
import numpy as np
import pytest
from numba import njit

from enzyme_py import BatchDuplicated, Duplicated, Forward, autodiff
from fd_modes import check_modes, check_reverse

# square, tall and wide; each order with one dtype; tall in both: every shape, order and dtype
# at two thirds of the compiles of all pairs
CASES = [((4, 4), "C", np.float64), ((5, 3), "F", np.float32), ((3, 5), "F", np.float32),
         ((5, 3), "C", np.float64)]
SHAPES = [(4, 4), (5, 3), (3, 5)]


def matrix(r, shape, dtype, order="C"):
    a = r.uniform(-1, 1, shape).astype(dtype)
    return np.asfortranarray(a) if order == "F" else a


@njit
def svd_thin(A, Wu, Ws, Wv):
    # sign-invariant in the singular vectors (LAPACK picks each pair's sign)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    return np.sum(Ws * s) + np.sum(Wu * U * U) + np.sum(Wv * Vt * Vt)


@njit
def svd_full_leading(A, Wu, Ws, Wv):
    # full_matrices=True; only the first min(m, n) singular vectors are used
    U, s, Vt = np.linalg.svd(A)
    k = s.shape[0]
    return np.sum(Ws * s) + np.sum(Wu * U[:, :k] ** 2) + np.sum(Wv * Vt[:k, :] ** 2)


@njit
def svd_rebuilt(A, W):
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    return np.sum(W * ((U * s) @ Vt))


@njit
def pinv_weighted(A, W):
    # a loop, not W * P: forward mode gets W * pinv(A) wrong (tests/regressions/
    # test_forward_pinv_result_through_ufunc.py); reverse mode gets both right
    P = np.linalg.pinv(A)
    total = 0.0
    for i in range(P.shape[0]):
        for j in range(P.shape[1]):
            total += W[i, j] * P[i, j]
    return total


@njit
def pinv_weighted_ufunc(A, W):
    return np.sum(W * np.linalg.pinv(A))


@njit
def spectral(A):
    return np.linalg.cond(A) + np.linalg.norm(A, 2) - 0.5 * np.linalg.norm(A, -2)


@njit
def qr_weighted(A, Wq, Wr):
    Q, R = np.linalg.qr(A)
    return np.sum(Wq * Q) + np.sum(Wr * R)


@pytest.mark.parametrize("shape,order,dtype", CASES)
def test_svd(shape, order, dtype):
    r = np.random.default_rng(sum(shape))
    m, n = shape
    k = min(shape)
    A = matrix(r, shape, dtype, order)
    check_modes(svd_thin, A, matrix(r, (m, k), dtype), matrix(r, k, dtype), matrix(r, (k, n), dtype))
    check_modes(svd_rebuilt, A, matrix(r, shape, dtype))


@pytest.mark.parametrize("shape", SHAPES)
def test_svd_full_matrices_leading_vectors(shape):
    r = np.random.default_rng(10 + sum(shape))
    m, n = shape
    k = min(shape)
    check_modes(svd_full_leading, matrix(r, shape, np.float64), matrix(r, (m, k), np.float64),
                matrix(r, k, np.float64), matrix(r, (k, n), np.float64))


@njit
def svd_extra_columns(A):
    U, s, Vt = np.linalg.svd(A)
    return np.sum(U[:, -1] ** 3)


def test_svd_full_matrices_extra_columns_have_no_derivative():
    """The columns full_matrices=True adds span the complement of A's range, in no particular
    basis: a seed on them makes the adjoint nan, their tangent is nan."""
    A = matrix(np.random.default_rng(11), (5, 3), np.float64)
    dA = np.zeros_like(A)
    autodiff(svd_extra_columns, Duplicated(A.copy(), dA), seed=1.0)
    assert np.all(np.isnan(dA))
    t = autodiff(svd_extra_columns, Duplicated(A.copy(), np.ones_like(A)), mode=Forward)
    assert np.isnan(t)


@pytest.mark.parametrize("shape,order,dtype", CASES)
def test_pinv(shape, order, dtype):
    r = np.random.default_rng(20 + sum(shape))
    A = matrix(r, shape, dtype, order)
    A += np.eye(*shape, dtype=dtype)          # in place: A keeps its order
    check_modes(pinv_weighted, A, matrix(r, shape[::-1], dtype))
    check_reverse(pinv_weighted_ufunc, A, matrix(r, shape[::-1], dtype))


@pytest.mark.parametrize("shape,order,dtype", CASES)
def test_cond_and_two_norms(shape, order, dtype):
    """Singular values only (gesdd with jobz 'N')."""
    r = np.random.default_rng(30 + sum(shape))
    A = matrix(r, shape, dtype, order)
    A += np.eye(*shape, dtype=dtype)
    check_modes(spectral, A)


@njit
def nuclear(A):
    return np.sum(np.linalg.svd(A)[1])


def test_repeated_singular_values():
    """Singular values alone stay exact (the nuclear norm of an orthogonal Q, repeated singular
    values 2, has derivative Q); singular vectors of repeated values have none: inf or nan."""
    q, _ = np.linalg.qr(np.random.default_rng(40).standard_normal((4, 4)))
    A = 2.0 * q
    dA = np.zeros_like(A)
    autodiff(nuclear, Duplicated(A.copy(), dA), seed=1.0)
    np.testing.assert_allclose(dA, q, atol=1e-12)
    t = autodiff(nuclear, Duplicated(A.copy(), np.eye(4)), mode=Forward)
    np.testing.assert_allclose(t, np.trace(q), atol=1e-12)
    W = np.arange(16.0).reshape(4, 4)
    dA = np.zeros_like(A)
    # every argument Duplicated, as in test_svd: its float64 gradient, built once
    autodiff(svd_thin, Duplicated(A.copy(), dA), *[Duplicated(w, np.zeros_like(w)) for w in (W, np.ones(4), W.copy())],
             seed=1.0)
    assert not np.all(np.isfinite(dA))


def test_zero_singular_value_of_a_rectangular_matrix():
    """A 5 x 3 matrix of rank 2 (a zero column: LAPACK's third singular value is exactly 0): the
    singular values' derivative is finite, the singular vectors' divides by 0: inf or nan."""
    A = np.zeros((5, 3))
    A[0, 0], A[1, 1], A[2, 0] = 2.0, 1.0, 0.5
    dA = np.zeros_like(A)
    autodiff(nuclear, Duplicated(A.copy(), dA), seed=1.0)
    assert np.all(np.isfinite(dA))
    dA = np.zeros_like(A)
    W = np.arange(15.0).reshape(5, 3)
    autodiff(svd_thin, Duplicated(A.copy(), dA),
             *[Duplicated(w, np.zeros_like(w)) for w in (W, np.ones(3), np.zeros((3, 3)))], seed=1.0)
    assert not np.all(np.isfinite(dA))


@pytest.mark.parametrize("shape,order,dtype", CASES)
def test_qr(shape, order, dtype):
    r = np.random.default_rng(50 + sum(shape))
    m, n = shape
    k = min(shape)
    A = matrix(r, shape, dtype, order)
    A += np.eye(*shape, dtype=dtype)
    check_modes(qr_weighted, A, matrix(r, (m, k), dtype), matrix(r, (k, n), dtype))


@njit
def qr_least_squares(A, b):
    # x = R^{-1} Q^T b, through the two LAPACK calls and a solve
    Q, R = np.linalg.qr(A)
    x = np.linalg.solve(R, b @ Q)
    return np.sum(x * x)


def test_qr_then_solve():
    r = np.random.default_rng(60)
    check_modes(qr_least_squares, matrix(r, (6, 3), np.float64) + np.eye(6, 3), matrix(r, 6, np.float64))


@njit
def lstsq_solution(A, b, W):
    return np.sum(W * np.linalg.lstsq(A, b)[0])


@pytest.mark.parametrize("kernel,shape", [(svd_rebuilt, (5, 3)), (qr_weighted, (3, 5)),
                                          (lstsq_solution, (5, 3))])
def test_batched_forward(kernel, shape):
    """Two tangent directions in one call agree with two single-direction calls."""
    r = np.random.default_rng(70)
    A = matrix(r, shape, np.float64) + np.eye(*shape)
    ws = {svd_rebuilt: [matrix(r, shape, np.float64)],
          qr_weighted: [matrix(r, (shape[0], min(shape)), np.float64),
                        matrix(r, (min(shape), shape[1]), np.float64)],
          lstsq_solution: [matrix(r, shape[0], np.float64), matrix(r, shape[1], np.float64)]}[kernel]
    dirs = [matrix(r, shape, np.float64) for _ in range(2)]
    single = [autodiff(kernel, Duplicated(A.copy(), d.copy()), *ws, mode=Forward) for d in dirs]
    both = autodiff(kernel, BatchDuplicated(A.copy(), tuple(d.copy() for d in dirs)), *ws, mode=Forward)
    np.testing.assert_allclose(np.asarray(both, dtype=float), single, rtol=1e-10)


@njit
def rank_scaled(A):
    return np.linalg.matrix_rank(A) * np.sum(A)


def test_matrix_rank_is_a_constant():
    """matrix_rank's singular values reach only comparisons: the rank's derivative is 0."""
    A = matrix(np.random.default_rng(80), (4, 3), np.float64)
    dA = np.zeros_like(A)
    autodiff(rank_scaled, Duplicated(A.copy(), dA), seed=1.0)
    np.testing.assert_allclose(dA, 3.0 * np.ones_like(A))
    t = autodiff(rank_scaled, Duplicated(A.copy(), np.ones_like(A)), mode=Forward)
    np.testing.assert_allclose(t, 36.0)


def test_pinv_of_a_rank_deficient_matrix_is_finite():
    """The cut-off drops the vectors of zero singular values: a finite value (the derivative
    along perturbations that keep the rank; docs/linalg.md). pinv_weighted_ufunc's float64 gradient
    is test_pinv's, built once."""
    r = np.random.default_rng(81)
    A = r.standard_normal((4, 2)) @ r.standard_normal((2, 3))
    dA = np.zeros_like(A)
    autodiff(pinv_weighted_ufunc, Duplicated(A.copy(), dA), r.standard_normal((3, 4)), seed=1.0)
    assert np.all(np.isfinite(dA))


@njit
def lstsq_use(A, B, Wx, Wr, Ws):
    x, res, rank, s = np.linalg.lstsq(A, B)
    return np.sum(Wx * x) + np.sum(Wr * res) + np.sum(Ws * s)


@njit
def lstsq_vector(A, b, Wx):
    x, res, rank, s = np.linalg.lstsq(A, b)
    return np.sum(Wx * x) + np.sum(res)


@pytest.mark.parametrize("shape,order,dtype", CASES)
def test_lstsq(shape, order, dtype):
    """Over- and under-determined and square, a matrix and a vector right-hand side; the
    residuals (m > n) and the singular values too."""
    r = np.random.default_rng(90 + sum(shape))
    m, n = shape
    A = matrix(r, shape, dtype, order)
    A += np.eye(*shape, dtype=dtype)
    check_modes(lstsq_use, A, matrix(r, (m, 2), dtype, order), matrix(r, (n, 2), dtype),
                matrix(r, 2 if m > n else 0, dtype), matrix(r, min(shape), dtype))
    check_modes(lstsq_vector, A, matrix(r, m, dtype), matrix(r, n, dtype))


def test_lstsq_rank_deficient_is_nan():
    """A rank-deficient A (a zero column: gelsd's rank is 2): the least-squares solution jumps
    with the rank; no derivative, nan."""
    r = np.random.default_rng(95)
    A = np.zeros((5, 3))
    A[:, :2] = r.standard_normal((5, 2))
    dA, db = np.zeros_like(A), np.zeros(5)
    autodiff(lstsq_vector, Duplicated(A.copy(), dA), Duplicated(r.standard_normal(5), db), np.ones(3),
             seed=1.0)
    assert np.all(np.isnan(dA)) and np.all(np.isnan(db))
