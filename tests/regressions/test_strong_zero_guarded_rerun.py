"""A zero adjoint times an inf or NaN partial counts as 0 in reverse mode, for every product:
a call whose unguarded gradient has an inf or NaN is redone, from a snapshot, with every product
guarded (enzyme_py/modes/strong_zero.py). Before, these gave NaN where the derivative is 0.
"""
import numpy as np
from numba import njit

from enzyme_py import Active, Const, Duplicated, Forward, autodiff, explain, value_and_grad
from enzyme_py.modes import strong_zero

X = np.array([4.0, -1.0, 9.0])


@njit
def where_sqrt(x, w):
    return np.sum(np.where(x > 0, np.sqrt(x) * w, 0.0))


def test_repeated_calls_fast_path_and_runner():
    """The fast path and its compiled runner (after a few calls) redo the call too."""
    before = strong_zero.reruns(where_sqrt)
    for _ in range(12):
        w = np.array([1.0, 2.0, 3.0])
        dw = np.full(3, 0.5)
        autodiff(where_sqrt, Const(X), Duplicated(w, dw))
        np.testing.assert_array_equal(dw, [2.5, 0.5, 3.5])    # accumulated once
        np.testing.assert_array_equal(w, [1.0, 2.0, 3.0])
    assert strong_zero.reruns(where_sqrt) == before + 12
    assert f"guarded reruns: {before + 12}" in str(
        explain(where_sqrt, Const(X), Duplicated(w, dw)))


@njit
def scaled(x, a):
    return np.sum(np.where(x > 0, np.sqrt(x) * a, 0.0))


def test_active_scalar():
    (_, da) = autodiff(scaled, Const(X), Active(1.5))
    assert da == 5.0


def test_value_and_grad():
    value, da = value_and_grad(scaled, argnums=1)(X, 1.5)
    assert value == 7.5 and da == 5.0


@njit
def in_place(x, w):
    x[:] = np.where(x > 0, np.sqrt(x) * w, 0.0)


def test_in_place_primal_and_shadows():
    """x ends as a plain call leaves it, dw accumulates exactly once, dx is consumed."""
    x, w = X.copy(), np.array([1.0, 2.0, 3.0])
    plain = X.copy()
    in_place(plain, w.copy())
    dx, dw = np.ones(3), np.full(3, 10.0)
    autodiff(in_place, Duplicated(x, dx), Duplicated(w, dw))
    np.testing.assert_array_equal(x, plain)
    np.testing.assert_array_equal(dw, [12.0, 10.0, 13.0])
    np.testing.assert_allclose(dx, [1.0 / 4.0, 0.0, 3.0 / 6.0])


@njit
def root(x):
    return np.sqrt(x[0]) + x[1] * x[1]


def test_true_infinite_gradient_stays():
    dx = np.zeros(2)
    autodiff(root, Duplicated(np.array([0.0, 2.0]), dx))
    assert dx[0] == np.inf and dx[1] == 4.0


@njit
def nan_product(x, w):
    return np.sum(np.sqrt(x) * w)


def test_true_nan_gradient_stays():
    dw = np.zeros(2)
    autodiff(nan_product, Const(np.array([4.0, -1.0])), Duplicated(np.ones(2), dw))
    assert dw[0] == 2.0 and np.isnan(dw[1])


@njit
def plain_sum(x, w):
    return np.sum(x * w)


def test_finite_gradient_is_not_redone():
    dw = np.zeros(3)
    autodiff(plain_sum, Const(X), Duplicated(np.ones(3), dw))
    np.testing.assert_array_equal(dw, X)
    assert strong_zero.reruns(plain_sum) == 0


@njit
def decay(x, w):
    return np.exp(-x[0] * w[0])


def test_forward_zero_tangent_times_inf():
    """d/dw exp(-x w) at w = inf is -x exp(-x w) = 0; x's zero tangent times w = inf was NaN."""
    before = strong_zero.reruns(decay)
    for _ in range(2):
        x, w = np.array([2.0]), np.array([np.inf])
        t = autodiff(decay, Duplicated(x, np.zeros(1)), Duplicated(w, np.ones(1)), mode=Forward)
        assert t == 0.0
    assert strong_zero.reruns(decay) == before + 2


def test_forward_true_nan_stays():
    t = autodiff(nan_product, Duplicated(np.array([4.0, -1.0]), np.ones(2)), Const(np.ones(2)),
                 mode=Forward)
    assert np.isnan(t)


@njit
def counted(x, w, calls):
    calls[0] += 1.0
    return np.sum(np.where(x > 0, np.sqrt(x) * w, 0.0))


def test_const_array_written_once():
    """A Const array the kernel writes is in the snapshot: it ends as one plain call leaves it."""
    for _ in range(6):     # the full path, the fast path, its runner
        calls, dw = np.zeros(1), np.zeros(3)
        autodiff(counted, Const(X), Duplicated(np.ones(3), dw), Const(calls))
        assert calls[0] == 1.0
        np.testing.assert_array_equal(dw, [2.0, 0.0, 3.0])
