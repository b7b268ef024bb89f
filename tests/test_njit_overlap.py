"""`autodiff` inside @njit with arrays apart (the gradient for disjoint memory) and with
overlapping views (the variant that assumes nothing, built on the first such call): both give
the gradient of the code a plain call runs, checked against finite differences."""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, autodiff, check_gradient
from enzyme_py.bridge.scratch import arrays_apart


@njit
def smear(x, y):
    s = 0.0
    for i in range(y.shape[0]):
        y[i] = y[i] * x[i] + x[i] * x[i]     # with x = a[1:], y = a[:-1], y[i + 1] overwrites x[i]
        s += y[i] * x[i]
    return s


@njit
def grad_in_njit(x, dx, y, dy):
    autodiff(smear, Duplicated(x, dx), Duplicated(y, dy))


def test_apart():
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0.5, 1.5, 6), rng.uniform(0.5, 1.5, 5)
    dx, dy = np.zeros(6), rng.standard_normal(5)
    want_x, want_dx = x.copy(), dx.copy()
    want_y, want_dy = y.copy(), dy.copy()
    autodiff(smear, Duplicated(want_x, want_dx), Duplicated(want_y, want_dy))
    grad_in_njit(x, dx, y, dy)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-12)
    np.testing.assert_allclose(dy, want_dy, rtol=1e-12)
    np.testing.assert_array_equal(y, want_y)
    assert check_gradient(smear, Duplicated(x, np.zeros(6)), Duplicated(y, dy)).passed


def test_overlapping_views():
    rng = np.random.default_rng(1)
    a, da = rng.uniform(0.5, 1.5, 7), np.zeros(7)
    want_a, want_da = a.copy(), da.copy()
    autodiff(smear, Duplicated(want_a[1:], want_da[1:]), Duplicated(want_a[:6], want_da[:6]))
    grad_in_njit(a[1:], da[1:], a[:6], da[:6])
    np.testing.assert_allclose(da, want_da, rtol=1e-12)
    np.testing.assert_array_equal(a, want_a)
    b, db = a.copy(), np.zeros(7)
    assert check_gradient(smear, Duplicated(b[1:], db[1:]), Duplicated(b[:6], db[:6])).passed


@njit
def _apart(a, b):
    return arrays_apart((a, b))


def test_byte_ranges():
    """arrays_apart: the bytes each array reaches, by its strides (negative too); an empty array
    reaches none; interleaved views count as overlapping (their ranges do)."""
    a, b = np.zeros(8), np.zeros((3, 4))
    assert _apart(a[:4], a[4:]) and not _apart(a[:5], a[4:])
    assert _apart(a[3::-1], a[4:]) and not _apart(a[4::-1], a[4:])
    assert not _apart(a[::2], a[1::2]) and _apart(a[:0], a)
    assert _apart(b[:, :2], a) and not _apart(b.T, b[2])
