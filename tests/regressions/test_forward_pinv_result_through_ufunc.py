"""Fixed: in forward mode, `np.sum(W * np.linalg.pinv(A))` and `np.sum(W * np.linalg.pinv(A).copy())`
gave a wrong tangent, while reverse mode and an explicit loop over the result were right (found
with the gesdd record). The result is Numba's gemm output `acpy.T.ravel().reshape(a.shape).T`:
forward mode repeated the inactive `numba_attempt_nocopy_reshape` on shadow pointers, and that
second call wrote the primal's new strides from the shadow struct's zero dims. Only frees and
functions that write no memory are now repeated on shadows
(transforms/forward/allocations.mirror_release; tests/regressions/test_forward_reshape_repeated_on_shadow.py)."""
import numpy as np
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


def test_pinv_tangent_through_a_ufunc():
    A, W, d = _case()
    inv = np.linalg.inv(A)
    t = autodiff(weighted_pinv, Duplicated(A.copy(), d.copy()), W, mode=Forward)
    np.testing.assert_allclose(t, np.sum(W * (-inv @ d @ inv)), rtol=1e-9)
