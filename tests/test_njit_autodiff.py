"""`autodiff` written literally inside @njit code, with the same annotations as in Python."""
import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from enzyme_py import Active, Const, Duplicated, DuplicatedNoNeed, Forward, Reverse, autodiff


@njit
def least_squares(w, X, y):
    s = 0.0
    for i in range(X.shape[0]):
        r = -y[i]
        for j in range(X.shape[1]):
            r += X[i, j] * w[j]
        s += r * r
    return s / X.shape[0]


@njit
def scale_into(x, a, out):
    s = 0.0
    for i in range(x.shape[0]):
        out[i] = a * x[i] * x[i]
        s += out[i]
    return s


@njit
def descend(w, X, y, steps, lr):
    dw = np.zeros_like(w)
    for _ in range(steps):
        dw[:] = 0.0
        autodiff(least_squares, Duplicated(w, dw), Const(X), y)
        for j in range(w.shape[0]):
            w[j] -= lr * dw[j]
    return w


def test_gradient_descent_in_njit_matches_python():
    r = np.random.default_rng(2)
    X = r.standard_normal((40, 3))
    w_true = np.array([1.5, -2.0, 0.5])
    y = X @ w_true
    w_njit = descend(np.zeros(3), X, y, 200, 0.1)

    w_py = np.zeros(3)
    for _ in range(200):
        dw = np.zeros(3)
        autodiff(least_squares, Duplicated(w_py, dw), X, y)
        w_py -= 0.1 * dw
    np.testing.assert_array_equal(w_njit, w_py)
    np.testing.assert_allclose(w_njit, w_true, atol=1e-6)


@njit
def reverse_in_njit(x, dx, out, dout, a, seed):
    return autodiff(scale_into, Duplicated(x, dx), Active(a), DuplicatedNoNeed(out, dout),
                    mode=Reverse, seed=seed)


def test_reverse_returns_active_derivatives_and_fills_shadows():
    x = np.array([0.5, -1.0, 2.0])
    dx, dout = np.zeros(3), np.array([1.0, 0.0, 2.0])
    got = reverse_in_njit(x, dx, np.zeros(3), dout, 1.5, 3.0)
    # L = 3 * sum(a x^2) + <dout_seed, a x^2>
    weights = 3.0 + np.array([1.0, 0.0, 2.0])
    assert got[0] is None and got[2] is None
    assert got[1] == pytest.approx(np.sum(weights * x * x), rel=1e-14)
    np.testing.assert_allclose(dx, weights * 2 * 1.5 * x, rtol=1e-14)
    np.testing.assert_array_equal(dout, 0.0)      # `out` is overwritten: its seed is consumed


@njit
def forward_in_njit(x, tx, out, tout, a, ta):
    return autodiff(scale_into, Duplicated(x, tx), Active(a, ta), Duplicated(out, tout),
                    mode=Forward)


def test_forward_mode_in_njit():
    x = np.array([0.5, -1.0, 2.0])
    tx, tout = np.array([1.0, 2.0, -1.0]), np.zeros(3)
    got = forward_in_njit(x, tx, np.zeros(3), tout, 1.5, 0.25)
    want = np.sum(2 * 1.5 * x * tx + 0.25 * x * x)
    assert got == pytest.approx(want, rel=1e-14)
    np.testing.assert_allclose(tout, 2 * 1.5 * x * tx + 0.25 * x * x, rtol=1e-14)


@njit
def with_annotations(d, a, c):
    return autodiff(scale_into, d, a, c)


def test_annotations_made_in_python_pass_into_njit():
    x, dx = np.array([1.0, 2.0]), np.zeros(2)
    out = np.zeros(2)
    got = with_annotations(Duplicated(x, dx), Active(2.0), Duplicated(out, np.zeros(2)))
    assert got[1] == pytest.approx(5.0)
    np.testing.assert_allclose(dx, [4.0, 8.0])


def test_shadow_with_another_shape_raises_in_njit():
    with pytest.raises(ValueError, match="shape or strides"):
        reverse_in_njit(np.ones(3), np.zeros(4), np.zeros(3), np.zeros(3), 1.0, 1.0)


def test_active_on_an_array_is_a_typing_error():
    @njit
    def bad(x, out):
        return autodiff(scale_into, Active(x), 1.0, Duplicated(out, np.zeros_like(out)))

    with pytest.raises(TypingError, match="Active is for float scalars"):
        bad(np.ones(2), np.zeros(2))
