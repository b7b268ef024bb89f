"""Fixed: after a call with native float64, a '>f8' array passed the fast path's checks (Numba's
typing fingerprint ignores byte order) and was read as native doubles; the full path's clear
error was skipped. Unaligned arrays passed too.

Now the fast path's key and the runner's structure hold each array's dtype, compared exactly,
unaligned arrays miss, and Const arrays of non-native byte order get the full path's TypeError.
"""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Const, Duplicated, autodiff
from enzyme_py.modes import fast


@njit
def weighted(x, c):
    return x[0] * x[0] * c[0]


def _warm(monkeypatch):
    monkeypatch.setattr(fast, "RUNNER_CALLS", 3)      # the compiled runner is tried too
    x, dx, c = np.array([1.5]), np.zeros(1), np.array([2.0])
    for _ in range(5):
        autodiff(weighted, Duplicated(x, dx), Const(c))


def test_swapped_duplicated_array_is_refused(monkeypatch):
    _warm(monkeypatch)
    x = np.array([1.5], dtype=">f8")
    dx = np.zeros_like(x)
    with pytest.raises(TypeError, match=">f8 array cannot be differentiated"):
        autodiff(weighted, Duplicated(x, dx), Const(np.array([2.0])))
    np.testing.assert_array_equal(dx, 0.0)


def test_swapped_const_array_is_refused(monkeypatch):
    _warm(monkeypatch)
    x, dx = np.array([1.5]), np.zeros(1)
    with pytest.raises(TypeError, match="non-native byte order"):
        autodiff(weighted, Duplicated(x, dx), Const(np.array([2.0], dtype=">f8")))
    np.testing.assert_array_equal(dx, 0.0)


def test_unaligned_const_array_is_read_right(monkeypatch):
    """A guard: unaligned arrays now always take the full path."""
    _warm(monkeypatch)
    buf = np.zeros(17, np.uint8)
    c = buf[1:9].view(np.float64)
    c[0] = 4.0
    x, dx = np.array([1.5]), np.zeros(1)
    for _ in range(3):
        dx[:] = 0.0
        autodiff(weighted, Duplicated(x, dx), Const(c))
        np.testing.assert_array_equal(dx, [12.0])
