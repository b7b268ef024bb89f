"""Fixed: np.fill_diagonal with a differentiable scalar was refused in both modes ("differentiable
float data is read as an integer"), found by the NumPy coverage table.

Root cause: Numba copies the scalar into a one-element array and flattens it; LLVM lowers that
8-byte memcpy to `load i64` + `store i64`, an integer copy of a double. The preparation pass
float-copies (transforms/prepare/float_copies.py) gives an integer load that is only stored the
float type of the slot it reads, when that slot is accessed otherwise only as that float type.
"""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, Forward, autodiff


@njit
def set_diagonal(A, v):
    c = A.copy()
    np.fill_diagonal(c, v[0])
    return c[0, 0] * 3.0 + c[0, 1] + c[1, 1]


def test_fill_diagonal_scalar_both_modes():
    A = np.arange(9.0).reshape(3, 3)
    v = np.array([2.0])
    dA, dv = np.zeros_like(A), np.zeros(1)
    autodiff(set_diagonal, Duplicated(A, dA), Duplicated(v, dv), seed=1.0)
    expect = np.zeros((3, 3))
    expect[0, 1] = 1.0
    np.testing.assert_allclose(dA, expect)
    np.testing.assert_allclose(dv, [4.0])
    t = autodiff(set_diagonal, Duplicated(A, np.zeros_like(A)), Duplicated(v, np.ones(1)), mode=Forward)
    np.testing.assert_allclose(t, 4.0)
