"""A product masked by a test other than a NaN test, in a kernel with no NaN test.

`np.where(x > 0, np.sqrt(x) * w, 0)` summed: the gradient in w was NaN where x < 0 (it should be
0): products (fmul) are guarded only in kernels that test a float for NaN or infinity
(rules/finite.py `tests_nan`). Now such a call is redone with every product guarded when its
unguarded gradient comes out inf or NaN (enzyme_py/modes/strong_zero.py).
"""
import numpy as np
from numba import njit

from enzyme_py import Const, Duplicated, autodiff


@njit
def where_sqrt(x, w):
    return np.sum(np.where(x > 0, np.sqrt(x) * w, 0.0))


def test_reverse_where_sqrt_in_w():
    x, w = np.array([4.0, -1.0, 9.0]), np.array([1.0, 2.0, 3.0])
    dw = np.zeros(3)
    autodiff(where_sqrt, Const(x), Duplicated(w.copy(), dw))
    np.testing.assert_array_equal(dw, [2.0, 0.0, 3.0])
