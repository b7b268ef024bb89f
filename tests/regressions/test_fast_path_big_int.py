"""Fixed: after a call with a small int, `Const(2**63 + 5)` raised OverflowError on the fast
path (its key types every int as int64); the full path and a plain call take it (uint64).
Now an int the remembered entry cannot hold misses the fast path (nothing has run)."""
import numpy as np
from numba import njit

from enzyme_py import Const, Duplicated, autodiff


@njit
def scaled(x, n):
    return x[0] * x[0] * (n % 7)


def test_int_beyond_int64_after_small_ints():
    x = np.array([1.5])
    for n in (3, 3, 3, 2**63 + 5, 2**63 + 5):
        dx = np.zeros(1)
        autodiff(scaled, Duplicated(x, dx), Const(n))
        factor = njit(scaled.py_func)(np.array([1.0]), n)    # Numba's n % 7 for n's own type
        np.testing.assert_array_equal(dx, [2 * 1.5 * factor])
