"""The strong zero's rerun put back a typed List's arrays but not the list itself: a kernel
that appends to a Const typed List argument (a log of calls) and masks a NaN product was run
twice, and the list kept both appends where a plain call makes one. The snapshot now keeps each
typed List's and Dict's items and restores them before the guarded run
(enzyme_py/modes/strong_zero.py)."""
import numpy as np
from numba import njit, typed

from enzyme_py import Const, Duplicated, autodiff
from enzyme_py.modes import strong_zero


@njit
def logged(x, w, log):
    log.append(float(x.size))
    return np.sum(np.where(x > 0, np.sqrt(x) * w, 0.0))


def test_rerun_leaves_one_append():
    x, w = np.array([4.0, -1.0, 9.0]), np.array([1.0, 2.0, 3.0])
    log = typed.List([0.0])
    dw = np.zeros(3)
    autodiff(logged, Const(x), Duplicated(w.copy(), dw), Const(log))
    np.testing.assert_array_equal(dw, [2.0, 0.0, 3.0])
    assert list(log) == [0.0, 3.0]
    assert strong_zero.reruns(logged) == 1
