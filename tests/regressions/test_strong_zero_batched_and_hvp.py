"""A product masked by a test other than a NaN test, in batched reverse mode and in
Hessian-vector products.

`np.where(x > 0, np.sqrt(x) * w, 0)` summed: at x < 0 the lanes of batched reverse mode and the
Hessian-vector product in w held NaN (the derivative of the code as run is 0 there): only
`autodiff`'s plain reverse and forward calls were redone with every product guarded. Batched
reverse mode and `hessian_vector_product` (and `hessian`, built on it) now redo a call whose
derivatives come out inf or NaN with the guarded variant too (enzyme_py/modes/strong_zero.py).
"""
import numpy as np
from numba import njit

from enzyme_py import (Active, BatchDuplicated, Const, autodiff, hessian,
                       hessian_vector_product)


@njit
def where_sqrt(x, w):
    return np.sum(np.where(x > 0, np.sqrt(x) * w, 0.0))


@njit
def where_sqrt_scaled(x, w, a):
    return a * np.sum(np.where(x > 0, np.sqrt(x) * w * w, 0.0))


@njit
def where_sqrt_sq(w, x):
    return np.sum(np.where(x > 0, np.sqrt(x) * w * w, 0.0))


X = np.array([4.0, -1.0, 9.0])
W = np.array([1.0, 2.0, 3.0])


def test_batched_lanes_accumulate_zero_where_masked():
    d1, d2 = np.full(3, 0.5), np.zeros(3)
    w = W.copy()
    autodiff(where_sqrt, Const(X), BatchDuplicated(w, (d1, d2)), seed=(1.0, 2.0))
    np.testing.assert_array_equal(d1, [2.5, 0.5, 3.5])      # 0.5 + seed * sqrt(x), 0 at x < 0
    np.testing.assert_array_equal(d2, [4.0, 0.0, 6.0])
    np.testing.assert_array_equal(w, W)


def test_batched_active_scalar():
    d1, d2 = np.zeros(3), np.zeros(3)
    out = autodiff(where_sqrt_scaled, Const(X), BatchDuplicated(W.copy(), (d1, d2)), Active(2.0),
                   seed=(1.0, 3.0))
    f_over_a = 2.0 * 1.0 + 3.0 * 9.0       # sum over x > 0 of sqrt(x) * w^2
    np.testing.assert_allclose(out[2], (f_over_a, 3.0 * f_over_a))
    np.testing.assert_allclose(d1, [8.0, 0.0, 36.0])        # a * 2 sqrt(x) w
    np.testing.assert_allclose(d2, [24.0, 0.0, 108.0])


def test_hvp_and_hessian_zero_where_masked():
    hv = hessian_vector_product(where_sqrt_sq, W.copy(), np.ones(3), X)
    np.testing.assert_array_equal(hv, [4.0, 0.0, 6.0])      # 2 sqrt(x) where x > 0
    np.testing.assert_array_equal(hessian(where_sqrt_sq, W.copy(), X), np.diag([4.0, 0.0, 6.0]))


@njit
def sqrt_sum(w):
    return np.sum(np.sqrt(w))


def test_hvp_true_infinity_stays():
    hv = hessian_vector_product(sqrt_sum, np.array([0.0, 4.0]), np.ones(2))
    assert np.isinf(hv[0]) or np.isnan(hv[0])
    np.testing.assert_allclose(hv[1], -0.25 * 4.0 ** -1.5)
