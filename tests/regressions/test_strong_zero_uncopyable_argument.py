"""A masked product in a kernel that also writes a record argument.

The optimistic strong zero reruns a call with every product guarded only when it could put the
arguments back first; a record (or jitclass, typed list) is not copied by the snapshot, so the
unguarded result stood: `dw` held NaN where `x < 0`. Such a call now runs the guarded variant
straight away (enzyme_py/modes/strong_zero.py): dw is 0 there, and the record is written once
per call.
"""
import numpy as np
from numba import njit

from enzyme_py import Const, Duplicated, autodiff
from enzyme_py.modes import strong_zero


@njit
def counted(x, w, rec):
    rec["calls"] += 1.0
    return np.sum(np.where(x > 0, np.sqrt(x) * w, 0.0))


def test_record_argument_gets_the_strong_zero():
    x, w = np.array([4.0, -1.0, 9.0]), np.array([1.0, 2.0, 3.0])
    rec = np.zeros(1, dtype=[("calls", "f8")])[0]
    dw = np.zeros(3)
    for calls in (1, 2):             # the full path, then the fast path
        autodiff(counted, Const(x), Duplicated(w.copy(), dw), Const(rec))
        np.testing.assert_array_equal(dw, [2.0 * calls, 0.0, 3.0 * calls])
        assert rec["calls"] == calls
    assert strong_zero.reruns(counted) == 2
