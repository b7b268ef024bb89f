"""A returned tuple with an Optional(float) leaf (`w = None` unless an argument is given): a float
seed for that leaf applies when the call returns a float there and is ignored when it returns
None, in both modes. Before: a TypeError asked for None as its seed."""
import numba
import numpy as np

from enzyme_py import Const, Duplicated, Forward, autodiff, check_gradient


@numba.njit
def energy(x, w_max=None):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.sin(x[i]) * x[i]
    w = None
    if w_max is not None:
        w = s * s * w_max
    return s, w


def _x():
    return np.array([0.3, -1.2, 2.0])


def test_reverse_float_and_none():
    x = _x()
    assert check_gradient(energy, Duplicated(x, np.zeros(3)), Const(2.0), seed=(0.5, 1.5))
    assert check_gradient(energy, Duplicated(x, np.zeros(3)), Const(None), seed=(0.5, 1.5))
    dx = np.zeros(3)
    autodiff(energy, Duplicated(x, dx), Const(None), seed=(0.5, 1.5))
    np.testing.assert_allclose(dx, 0.5 * (np.cos(x) * x + np.sin(x)), rtol=1e-12)


def test_forward_tangent():
    x, u = _x(), np.array([1.0, -0.5, 0.25])
    out = autodiff(energy, Duplicated(x, u), Const(2.0), mode=Forward)
    s = float(np.sum(np.sin(x) * x))
    ds = float(np.sum((np.cos(x) * x + np.sin(x)) * u))
    h = 1e-6
    fd = (energy(x + h * u, 2.0)[1] - energy(x - h * u, 2.0)[1]) / (2 * h)
    np.testing.assert_allclose(out[0], ds, rtol=1e-10)
    np.testing.assert_allclose(out[1], 4.0 * s * ds, rtol=1e-10)
    np.testing.assert_allclose(out[1], fd, rtol=1e-6)


@numba.njit
def capped(x, w_max):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    w = None
    if w_max > 0.0:
        w = s * w_max
    return s, w


def test_optional_typed_leaf_that_is_none_or_float():
    x = _x()
    assert check_gradient(capped, Duplicated(x, np.zeros(3)), Const(3.0), seed=(0.5, 1.5))
    for w_max, want in ((-1.0, 0.5), (3.0, 0.5 + 1.5 * 3.0)):
        dx = np.zeros(3)
        autodiff(capped, Duplicated(x, dx), Const(w_max), seed=(0.5, 1.5))
        np.testing.assert_allclose(dx, want * 2 * x, rtol=1e-12)
    u = np.array([1.0, -0.5, 0.25])
    out = autodiff(capped, Duplicated(x, u), Const(3.0), mode=Forward)
    np.testing.assert_allclose(out[1], 3.0 * 2 * np.dot(x, u), rtol=1e-12)
    out = autodiff(capped, Duplicated(x, u), Const(-1.0), mode=Forward)
    assert out[1] is None       # None returned there: its tangent is None



def test_with_primal():
    from enzyme_py import ReverseWithPrimal
    dx = np.zeros(3)
    _, value = autodiff(capped, Duplicated(_x(), dx), Const(3.0), seed=(1.0, 1.0),
                        mode=ReverseWithPrimal)
    assert value == capped(_x(), 3.0)
    np.testing.assert_allclose(dx, 4.0 * 2 * _x(), rtol=1e-12)
