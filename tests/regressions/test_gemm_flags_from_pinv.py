"""Numba's `np.linalg.pinv` calls gemm with the transpose flags 'C' (upper case) and its scale
factors alpha, beta in constant global arrays; the gemm record refused both ("a transpose flag
that is not a constant", "a scale factor that is not a constant"). The flags are read in either
case now, and a scale factor from a constant global's bytes."""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, autodiff


@njit
def pinv_weighted(A, W):
    return np.sum(W * np.linalg.pinv(A))


def test_pinv_of_an_invertible_matrix():
    r = np.random.default_rng(0)
    A = r.standard_normal((3, 3)) + 3.0 * np.eye(3)
    W = r.standard_normal((3, 3))
    dA = np.zeros_like(A)
    autodiff(pinv_weighted, Duplicated(A.copy(), dA), W, seed=1.0)
    inv = np.linalg.inv(A)
    np.testing.assert_allclose(dA, -inv.T @ W @ inv.T, rtol=1e-8, atol=1e-10)   # pinv = inv here
