"""Optional(float) return leaves (docs/semantics.md, "The return value"): a float seed applies when
the call returns a float there and is ignored when it returns None; the forward tangent is None
when the value is None, else a float. Both modes, with and without the primal, one and several
directions, against finite differences and the analytic derivative."""
import numba
import numpy as np
import pytest

from enzyme_py import (BatchDuplicated, Const, Duplicated, Forward, ForwardWithPrimal,
                       ReverseWithPrimal, autodiff, check_gradient)


@numba.njit
def capped(x, w_max):
    """(s, w, n): s = sum x^2 sin x, w = s * w_max when w_max > 0 else None (Optional(float))."""
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i] * np.sin(x[i])
    w = None
    if w_max > 0.0:
        w = s * w_max
    return s, (w, x.shape[0])


@numba.njit
def lone(x, w_max):
    """The Optional float alone: s * w_max, or None."""
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i] * np.sin(x[i])
    if w_max > 0.0:
        return s * w_max
    return None


X = np.array([0.3, -1.2, 2.0, 0.7])
U = np.array([1.0, -0.5, 0.25, 2.0])
W = {"float": 3.0, "None": -1.0}


def _ds(x):
    return 2 * x * np.sin(x) + x * x * np.cos(x)


def _fd(f, x, u, h=1e-6):
    """The central difference of f along u (None where f returns None)."""
    a, b = f(x + h * u), f(x - h * u)
    return None if a is None else (a - b) / (2 * h)


def test_types_are_optional():
    capped(X, 1.0)
    lone(X, 1.0)
    assert isinstance(capped.nopython_signatures[0].return_type[1][0], numba.types.Optional)
    assert isinstance(lone.nopython_signatures[0].return_type, numba.types.Optional)


@pytest.mark.parametrize("value", sorted(W))
def test_reverse(value):
    w_max = W[value]
    assert check_gradient(capped, Duplicated(X, np.zeros(4)), Const(w_max), seed=(0.5, (1.5, None)))
    dx = np.zeros(4)
    autodiff(capped, Duplicated(X, dx), Const(w_max), seed=(0.5, (1.5, None)))
    weight = 0.5 + (1.5 * w_max if value == "float" else 0.0)
    np.testing.assert_allclose(dx, weight * _ds(X), rtol=1e-12)


@pytest.mark.parametrize("value", sorted(W))
def test_reverse_lone_default_seed(value):
    w_max = W[value]
    assert check_gradient(lone, Duplicated(X, np.zeros(4)), Const(w_max))
    dx = np.zeros(4)
    autodiff(lone, Duplicated(X, dx), Const(w_max))
    np.testing.assert_allclose(dx, (w_max if value == "float" else 0.0) * _ds(X), rtol=1e-12)


@pytest.mark.parametrize("value", sorted(W))
def test_forward(value):
    w_max = W[value]
    s_dot, (w_dot, n_dot) = autodiff(capped, Duplicated(X, U.copy()), Const(w_max), mode=Forward)
    np.testing.assert_allclose(s_dot, _fd(lambda x: capped(x, w_max)[0], X, U), rtol=1e-6)
    np.testing.assert_allclose(s_dot, _ds(X) @ U, rtol=1e-12)
    assert n_dot is None
    want = _fd(lambda x: capped(x, w_max)[1][0], X, U)
    if value == "None":
        assert w_dot is None and want is None
    else:
        assert isinstance(w_dot, float)
        np.testing.assert_allclose(w_dot, want, rtol=1e-6)
        np.testing.assert_allclose(w_dot, w_max * _ds(X) @ U, rtol=1e-12)
    t = autodiff(lone, Duplicated(X, U.copy()), Const(w_max), mode=Forward)
    assert (t is None) == (value == "None")
    if t is not None:
        np.testing.assert_allclose(t, _fd(lambda x: lone(x, w_max), X, U), rtol=1e-6)


@pytest.mark.parametrize("value", sorted(W))
def test_with_primal(value):
    """The value comes back as a plain call returns it: a float or None."""
    w_max = W[value]
    dx = np.zeros(4)
    _, got = autodiff(capped, Duplicated(X, dx), Const(w_max), seed=(0.5, (1.5, None)),
                      mode=ReverseWithPrimal)
    assert got == capped(X, w_max)
    weight = 0.5 + (1.5 * w_max if value == "float" else 0.0)
    np.testing.assert_allclose(dx, weight * _ds(X), rtol=1e-12)
    tangent, got = autodiff(capped, Duplicated(X, U.copy()), Const(w_max), mode=ForwardWithPrimal)
    assert got == capped(X, w_max)
    assert (tangent[1][0] is None) == (value == "None")
    tangent, got = autodiff(lone, Duplicated(X, U.copy()), Const(w_max), mode=ForwardWithPrimal)
    assert got == lone(X, w_max)
    assert (tangent is None) == (value == "None")


@pytest.mark.parametrize("value", sorted(W))
def test_several_directions(value):
    w_max = W[value]
    e0 = np.eye(4)[0]
    lanes = autodiff(capped, BatchDuplicated(X, (U.copy(), e0)), Const(w_max), mode=Forward)
    for lane, u in zip(lanes, (U, e0)):
        np.testing.assert_allclose(lane[0], _ds(X) @ u, rtol=1e-12)
        if value == "None":
            assert lane[1][0] is None
        else:
            np.testing.assert_allclose(lane[1][0], w_max * _ds(X) @ u, rtol=1e-12)
    d0, d1 = np.zeros(4), np.zeros(4)
    autodiff(capped, BatchDuplicated(X, (d0, d1)), Const(w_max),
             seed=[(1.0, (0.0, None)), (0.0, (2.0, None))])
    np.testing.assert_allclose(d0, _ds(X), rtol=1e-12)
    np.testing.assert_allclose(d1, (2.0 * w_max if value == "float" else 0.0) * _ds(X),
                               rtol=1e-12)
