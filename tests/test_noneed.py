"""DuplicatedNoNeed (ir_passes/transforms/common/noneed.py): the forward sweep skips stores into an
array whose primal result the caller does not need, unless something may read it back.
Gradients are checked against analytic values and central finite differences; whether the
stores were skipped shows in the primal array (left untouched, or computed)."""
import math

import numpy as np
from numba import njit

from enzyme_py import Duplicated, DuplicatedNoNeed, Forward, autodiff, check_gradient


@njit
def elementwise(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i] + math.sin(x[i])


@njit
def reads_back(x, y, z):
    for i in range(x.shape[0]):
        y[i] = math.sin(x[i])
    for i in range(x.shape[0]):
        z[i] = y[i] * y[i]               # y is read: its stores must stay


@njit
def accumulates(x, y):
    for i in range(x.shape[0]):
        y[i] += x[i] * x[i]              # the update loads y


@njit
def call_reads(x, y):
    for i in range(x.shape[0]):
        y[i] = 2.0 * x[i]
    return np.sum(y)                     # reads y back after the writes


def _data(n=9, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.5, 1.5, n), rng.standard_normal(n)


def test_stores_are_skipped_and_the_gradient_is_exact():
    x, w = _data()
    y, dx, dy = np.full_like(x, 7.0), np.zeros_like(x), w.copy()
    autodiff(elementwise, Duplicated(x, dx), DuplicatedNoNeed(y, dy))
    np.testing.assert_allclose(dx, w * (2 * x + np.cos(x)), rtol=1e-14, atol=1e-15)
    assert np.all(y == 7.0), "the primal result was computed although it is not needed"
    assert np.all(dy == 0.0)


def test_duplicated_still_computes_the_primal():
    x, w = _data()
    y, dx, dy = np.zeros_like(x), np.zeros_like(x), w.copy()
    autodiff(elementwise, Duplicated(x, dx), Duplicated(y, dy))
    np.testing.assert_allclose(y, x * x + np.sin(x), rtol=1e-15)


def test_memory_read_back_keeps_its_stores():
    x, w = _data(seed=1)
    y, z = np.zeros_like(x), np.zeros_like(x)
    dx, dy, dz = np.zeros_like(x), np.zeros_like(x), w.copy()
    autodiff(reads_back, Duplicated(x, dx), DuplicatedNoNeed(y, dy), Duplicated(z, dz))
    np.testing.assert_allclose(dx, w * 2 * np.sin(x) * np.cos(x), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(z, np.sin(x) ** 2, rtol=1e-15)
    rep = check_gradient(reads_back, Duplicated(x, np.zeros_like(x)),
                         DuplicatedNoNeed(np.zeros_like(x), np.zeros_like(x)),
                         Duplicated(np.zeros_like(x), w.copy()))
    assert rep.passed, str(rep)


def test_update_in_place_keeps_its_stores():
    x, w = _data(seed=2)
    y0 = np.linspace(-1, 1, x.size)
    y, dx, dy = y0.copy(), np.zeros_like(x), w.copy()
    autodiff(accumulates, Duplicated(x, dx), DuplicatedNoNeed(y, dy))
    np.testing.assert_allclose(dx, 2 * w * x, rtol=1e-14)
    np.testing.assert_allclose(dy, w, rtol=0)          # y's initial value passes straight through
    rep = check_gradient(accumulates, Duplicated(x, np.zeros_like(x)),
                         DuplicatedNoNeed(y0.copy(), w.copy()))
    assert rep.passed, str(rep)


def test_return_value_reads_the_array():
    x, w = _data(seed=3)
    y, dx, dy = np.zeros_like(x), np.zeros_like(x), w.copy()
    autodiff(call_reads, Duplicated(x, dx), DuplicatedNoNeed(y, dy), seed=0.5)
    np.testing.assert_allclose(dx, 2 * (w + 0.5), rtol=1e-14)
    np.testing.assert_allclose(y, 2 * x, rtol=0)


@njit
def square_into(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i]


def _overlapping(kind):
    # y's memory is x's shifted by two: later loads of x read what y's stores wrote
    buf, dbuf = np.linspace(0.1, 1.0, 10), np.zeros(10)
    dbuf[2:] = np.arange(1.0, 9.0)
    autodiff(square_into, Duplicated(buf[:8], dbuf[:8]), kind(buf[2:], dbuf[2:]))
    return dbuf


def test_overlapping_arrays_keep_the_stores():
    np.testing.assert_array_equal(_overlapping(DuplicatedNoNeed), _overlapping(Duplicated))
    assert np.any(_overlapping(Duplicated)[:2] != 0.0)   # the chain through y reaches x[0:2]


def test_finite_differences_through_the_checker():
    x, w = _data(seed=4)
    rep = check_gradient(elementwise, Duplicated(x, np.zeros_like(x)),
                         DuplicatedNoNeed(np.zeros_like(x), w.copy()))
    assert rep.passed, str(rep)


def test_inside_njit_code():
    from enzyme_py import autodiff as ad

    @njit
    def outer(x, dx, y, dy):
        ad(elementwise, Duplicated(x, dx), DuplicatedNoNeed(y, dy))

    x, w = _data(seed=5)
    y, dx, dy = np.zeros_like(x), np.zeros_like(x), w.copy()
    outer(x, dx, y, dy)
    np.testing.assert_allclose(dx, w * (2 * x + np.cos(x)), rtol=1e-14, atol=1e-15)


def test_forward_mode_skips_the_stores_too():
    x, w = _data(seed=6)
    t = np.ones_like(x)
    y, dy = np.full_like(x, 7.0), np.zeros_like(x)
    autodiff(elementwise, Duplicated(x, t.copy()), DuplicatedNoNeed(y, dy), mode=Forward)
    np.testing.assert_allclose(dy, 2 * x + np.cos(x), rtol=1e-14, atol=1e-15)
    assert np.all(y == 7.0)
    y2, dy2 = np.zeros_like(x), np.zeros_like(x)
    autodiff(reads_back, Duplicated(x, t.copy()), DuplicatedNoNeed(y2, dy2),
             Duplicated(np.zeros_like(x), np.zeros_like(x)), mode=Forward)
    np.testing.assert_allclose(y2, np.sin(x), rtol=1e-15)          # read back: computed
