"""bridge/scratch.py: the strong-zero entries' copies and their finiteness test, emitted in place
(intrinsics): a strided and an empty array copied out and back in C order, complex items, and
all_finite against NumPy's isfinite."""
import numpy as np
import pytest
from numba import njit

from enzyme_py.bridge.scratch import all_finite, from_flat, scratch_like, to_flat


@njit
def _round_trip(a):
    c = scratch_like(a)
    to_flat(c, a)
    out = c.copy()
    a[...] = 0
    from_flat(a, c)
    return out


@njit
def _finite(a):
    return all_finite(a)


@pytest.mark.parametrize("a", [np.arange(24.0).reshape(4, 6)[:, ::2],
                               (np.arange(6) + 1j * np.arange(6)).reshape(2, 3).T,
                               np.zeros((0, 3))])
def test_copies_round_trip_in_c_order(a):
    before = a.copy()
    assert np.array_equal(_round_trip(a), before.ravel())
    assert np.array_equal(a, before)


@pytest.mark.parametrize("a", [np.arange(12.0).reshape(3, 4)[:, ::2], np.array([1.0, np.inf]),
                               np.array([np.nan]), np.zeros(0), np.array([1 + 1j * np.nan]),
                               np.array([-np.inf + 0j, 1j]), np.array([np.float32("inf")]),
                               np.full((3, 3), -1e308)[::2]])
def test_all_finite_is_numpys(a):
    assert _finite(a) == bool(np.all(np.isfinite(a)))
