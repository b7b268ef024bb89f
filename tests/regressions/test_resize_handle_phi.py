"""np.resize was refused in both modes ("a pointer mixes differentiable and constant memory"),
found by the NumPy coverage table; fixed on branch `lists` by its handle rule (a handle merged
with pointers loaded from shadow memory is its own shadow in reverse mode, its shadow handle in
forward mode).

np.resize grows its result in a loop (`res = np.concatenate((res, a))`), so an allocation handle
(NRT meminfo) meets, in a phi, the handle loaded from the input's array struct, and the phi is
stored into an array struct that has a shadow. Checked here against the derivative written out.
"""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, Forward, autodiff


@njit
def tiled_sum(x):
    r = np.resize(x, 7)
    return r[0] + 2.0 * r[3] + 3.0 * r[6]


def test_resize_both_modes():
    x = np.array([1.0, 2.0, 3.0])
    dx = np.zeros(3)
    autodiff(tiled_sum, Duplicated(x, dx), seed=1.0)
    np.testing.assert_allclose(dx, [1.0 + 2.0 + 3.0, 0.0, 0.0])
    t = autodiff(tiled_sum, Duplicated(x, np.array([1.0, 10.0, 100.0])), mode=Forward)
    np.testing.assert_allclose(t, 6.0)
