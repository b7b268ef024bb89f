"""np.unique, np.union1d, intersect1d, setdiff1d, setxor1d and np.extract were refused in reverse
mode, found by the NumPy coverage table: their results are built in a Numba list of floats that
grows by reallocation. Forward mode moves the tangents with the list; reverse mode refused,
because the adjoints the reverse sweep accumulates in the moved shadow never reached the old
buffer that the stores before the reallocation wrote.

Fixed: where the reverse sweep passes a reallocation backwards, it copies the adjoints of the
kept bytes back to the old shadow (transforms/reverse/shadows/growing.py).
"""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, Forward, autodiff


@njit
def ranked(x):
    u = np.unique(x)
    s = 0.0
    for i in range(u.size):
        s += u[i] * (1.0 + i)
    return s


def test_unique_reverse_and_forward():
    x = np.array([3.0, 1.0, 2.0, 1.0, 5.0])   # unique: [1, 2, 3, 5], weights 1, 2, 3, 4
    dx = np.zeros(5)
    autodiff(ranked, Duplicated(x, dx), seed=1.0)
    assert dx[[0, 2, 4]].tolist() == [3.0, 2.0, 4.0]
    assert sorted(dx[[1, 3]].tolist()) == [0.0, 1.0]   # the weight of 1.0 goes to one copy
    t = [autodiff(ranked, Duplicated(x, np.eye(5)[j]), mode=Forward) for j in range(5)]
    np.testing.assert_allclose(t, dx)
