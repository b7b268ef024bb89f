"""Open bug (found with the gesdd record, not fixed): in forward mode, `np.sum(W * np.linalg.pinv(A))`
and `np.sum(W * np.linalg.pinv(A).copy())` give a wrong tangent, while the same kernel in reverse
mode, `out[:] = np.linalg.pinv(A)` and an explicit loop over the result are right. The result is
Numba's gemm output `acpy.T.ravel().reshape(a.shape).T`, read by a ufunc loop or a memcpy; the
same reshape chain without pinv, a gemm into an array returned through that chain, and the SVD
with the product written out, `(Vt.T / s) @ U.T`, are right. In `out[:] = W * pinv(A)` only the
strictly lower triangle of out's tangent is wrong, while `out[:] = pinv(A)` in the same kernel is
right. Kept strict-xfail until the cause is found and fixed."""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, Forward, autodiff


@njit
def weighted_pinv(A, W):
    return np.sum(W * np.linalg.pinv(A))


@njit
def weighted_pinv_loop(A, W):
    P = np.linalg.pinv(A)
    s = 0.0
    for i in range(P.shape[0]):
        for j in range(P.shape[1]):
            s += W[i, j] * P[i, j]
    return s


def _case():
    r = np.random.default_rng(1)
    return r.standard_normal((3, 3)) + 2 * np.eye(3), r.standard_normal((3, 3)), r.standard_normal((3, 3))


def test_pinv_tangent_through_a_loop():
    A, W, d = _case()
    inv = np.linalg.inv(A)
    t = autodiff(weighted_pinv_loop, Duplicated(A.copy(), d.copy()), W, mode=Forward)
    np.testing.assert_allclose(t, np.sum(W * (-inv @ d @ inv)), rtol=1e-9)


@pytest.mark.xfail(strict=True, reason="forward-mode tangent of the pinv result read by a ufunc")
def test_pinv_tangent_through_a_ufunc():
    A, W, d = _case()
    inv = np.linalg.inv(A)
    t = autodiff(weighted_pinv, Duplicated(A.copy(), d.copy()), W, mode=Forward)
    np.testing.assert_allclose(t, np.sum(W * (-inv @ d @ inv)), rtol=1e-9)
