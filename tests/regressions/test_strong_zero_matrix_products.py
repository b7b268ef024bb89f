"""NaN through masked matrix products: a zero adjoint times an inf or NaN matrix entry is 0.

`y = A @ x` with a NaN row of A, the row's output dropped (`np.where(np.isnan(y), 0, y)`, or a
zero seed on it), gave dx = [nan, 6]: the reverse of gemv computes dx += A^T dy with BLAS, and
dy's zero times A's NaN is NaN. The same for gemm (`A @ B`) in A and in B, and in batched reverse
mode and Hessian-vector products, which differentiate the same reverse code.

Fixed in ir_passes/rules/blas.py (`guarded_product`): where the primal factor of an adjoint
product has an inf or NaN entry (runtime/matrix.py `all_finite`), the product is computed by a
loop that guards each term as rules/partials.py does; else by the library as before.
"""
import numpy as np
import pytest
from numba import njit

from enzyme_py import BatchDuplicated, Const, Duplicated, autodiff, hessian_vector_product


@njit
def masked_matvec(a, x):
    y = a @ x
    return np.sum(np.where(np.isnan(y), 0.0, y * y))


@njit
def masked_matvec_first(x, a):
    return masked_matvec(a, x)


@njit
def matvec_into(a, x, out):
    out[:] = a @ x


@njit
def masked_matmul(a, b):
    c = a @ b
    return np.sum(np.where(np.isnan(c), 0.0, c * c))


@njit
def masked_matmul_t(a, b):
    c = a.T @ b.T
    return np.sum(np.where(np.isnan(c), 0.0, c * c))


A = np.array([[1.0, 2.0], [np.nan, 1.0], [3.0, -4.0]])
X = np.array([0.5, -1.0])
KEEP = np.array([1.0, 0.0, 1.0])     # rows of A @ x that stay finite


def matvec_grad_x(a, x):
    """d/dx sum over finite rows of (a x)^2."""
    y = np.where(np.isnan(a @ x), 0.0, a @ x)
    return np.nan_to_num(a).T @ (2 * y)


def test_reverse_matvec_in_x():
    dx = np.zeros(2)
    autodiff(masked_matvec, Const(A), Duplicated(X.copy(), dx))
    np.testing.assert_allclose(dx, matvec_grad_x(A, X), rtol=1e-14)


def test_reverse_matvec_zero_seed_on_nan_row():
    dx, out = np.zeros(2), np.zeros(3)
    autodiff(matvec_into, Const(A), Duplicated(X.copy(), dx), Duplicated(out, KEEP.copy()))
    np.testing.assert_allclose(dx, np.nan_to_num(A).T @ KEEP, rtol=1e-14)


def test_batched_matvec_in_x():
    lanes = (np.zeros(2), np.zeros(2))
    autodiff(masked_matvec, Const(A), BatchDuplicated(X.copy(), lanes), seed=(1.0, -3.0))
    g = matvec_grad_x(A, X)
    np.testing.assert_allclose(lanes[0], g, rtol=1e-14)
    np.testing.assert_allclose(lanes[1], -3.0 * g, rtol=1e-14)


def test_hvp_matvec_in_x():
    v = np.array([1.0, 2.0])
    hv = hessian_vector_product(masked_matvec_first, X, v, A)
    a = np.nan_to_num(A) * KEEP[:, None]
    np.testing.assert_allclose(hv, 2 * a.T @ (a @ v), rtol=1e-14)


B = np.array([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]])


@pytest.mark.parametrize("kernel, flip", [(masked_matmul, False), (masked_matmul_t, True)])
def test_reverse_matmul_in_b(kernel, flip):
    """A (3 x 2) with a NaN entry: the rows of A @ B it makes NaN are dropped."""
    a, b = (A.T.copy(), B.T.copy()) if flip else (A, B)
    db = np.zeros_like(b)
    autodiff(kernel, Const(a), Duplicated(b.copy(), db))
    c = np.nan_to_num(A) @ B * KEEP[:, None]
    expected = 2 * np.nan_to_num(A).T @ c
    np.testing.assert_allclose(db, expected.T if flip else expected, rtol=1e-14)


@pytest.mark.parametrize("kernel, flip", [(masked_matmul, False), (masked_matmul_t, True)])
def test_reverse_matmul_in_a(kernel, flip):
    """B (2 x 3) with a NaN entry: the column of A @ B it makes NaN is dropped."""
    b = B.copy()
    b[0, 1] = np.nan
    keep = np.array([1.0, 0.0, 1.0])
    a, bb = (A.T.copy(), b.T.copy()) if flip else (A, b)
    a = np.nan_to_num(a)
    da = np.zeros_like(a)
    autodiff(kernel, Duplicated(a.copy(), da), Const(bb))
    c = np.nan_to_num(A) @ np.nan_to_num(b) * keep[None, :]
    expected = 2 * c @ np.nan_to_num(b).T
    np.testing.assert_allclose(da, expected.T if flip else expected, rtol=1e-14)


def test_reverse_matvec_in_a_zero_seed_times_nan_x():
    """dA += dy x^T (a rank-1 update): the zero-seeded row gets 0, the others dy_i x_j."""
    a, x = np.nan_to_num(A), np.array([0.5, np.nan])
    da, out = np.zeros_like(a), np.zeros(3)
    autodiff(matvec_into, Duplicated(a.copy(), da), Const(x), Duplicated(out, KEEP.copy()))
    np.testing.assert_array_equal(da, [[0.5, np.nan], [0.0, 0.0], [0.5, np.nan]])


@njit
def masked_steps(a, xs):
    s = 0.0
    for t in range(xs.shape[0]):
        h = a @ xs[t]
        s += np.sum(np.where(np.isnan(h), 0.0, h * h))
    return s


def test_reverse_matvec_in_a_in_a_loop():
    """The loop's rank-1 updates are added as one gemm when the reverse leaves the loop: step 1's
    x has a NaN, so its h is NaN and dropped, and its zero adjoint times that NaN is 0."""
    a = np.nan_to_num(A)
    xs = np.array([[0.5, -1.0], [np.nan, 2.0], [1.5, 0.25]])
    da = np.zeros_like(a)
    autodiff(masked_steps, Duplicated(a.copy(), da), Const(xs))
    expected = sum(2 * np.outer(a @ x, x) for x in xs[[0, 2]])
    np.testing.assert_allclose(da, expected, rtol=1e-14)
