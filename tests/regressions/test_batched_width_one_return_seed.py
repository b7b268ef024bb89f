"""Batched reverse mode with one lane over a kernel returning an array refused ("every
differentiated array needs k shadows"): the return's seed went in as a Duplicated argument
beside the BatchDuplicated ones, as in plain reverse mode."""
import numpy as np
from numba import njit

from enzyme_py import BatchDuplicated, autodiff


@njit
def squares(x):
    y = np.empty(2)
    y[0] = x[0] * x[1]
    y[1] = np.sin(x[2])
    return y


def test_one_lane_with_an_array_return():
    x = np.array([0.3, 0.7, 1.1])
    dx = np.zeros(3)
    autodiff(squares, BatchDuplicated(x, (dx,)), seed=[np.array([2.0, 3.0])])
    np.testing.assert_allclose(dx, [2.0 * 0.7, 2.0 * 0.3, 3.0 * np.cos(1.1)], rtol=1e-14)
    two = (np.zeros(3), np.zeros(3))
    autodiff(squares, BatchDuplicated(x, two), seed=[np.array([2.0, 3.0]), np.array([1.0, 0.0])])
    np.testing.assert_allclose(two[0], dx, rtol=1e-14)
    np.testing.assert_allclose(two[1], [0.7, 0.3, 0.0], rtol=1e-14)
