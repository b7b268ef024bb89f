"""The strong zero for gradients called from compiled code: `autodiff` inside @njit code and
`compile_gradient(...).entry` (reverse, forward and batched reverse mode).

Python's `autodiff` redoes a call whose derivatives come out inf or NaN with every product
guarded (enzyme_py/modes/strong_zero.py); these entries ran the unguarded variant only:
`np.where(x > 0, np.sqrt(x) * w, 0)` differentiated in w at x < 0 gave NaN where the
derivative is 0 (the reverse of `sqrt(x) * w` multiplies the zero adjoint by sqrt(x) = NaN).
Now the compiled entries redo the call too (enzyme_py/modes/strong_zero_entry.py).
"""
import numpy as np
from numba import njit
from numba.typed import List

from enzyme_py import (Active, BatchDuplicated, Const, Duplicated, Forward, autodiff,
                       compile_gradient)
from enzyme_py.modes import strong_zero

X = np.array([4.0, -1.0, 9.0])


@njit
def where_sqrt(x, w):
    return np.sum(np.where(x > 0, np.sqrt(x) * w, 0.0))


@njit
def grad_where_sqrt(x, w, dw):
    return autodiff(where_sqrt, Const(x), Duplicated(w, dw))


def test_reverse_masked_product_is_zero():
    before = strong_zero.reruns(where_sqrt)
    dw = np.zeros(3)
    grad_where_sqrt(X, np.array([1.0, 2.0, 3.0]), dw)
    np.testing.assert_array_equal(dw, [2.0, 0.0, 3.0])      # d/dw_i = sqrt(x_i) where x_i > 0
    assert strong_zero.reruns(where_sqrt) == before + 1
    dw[:] = 0.0
    grad_where_sqrt(np.abs(X), np.ones(3), dw)                # finite: not redone
    np.testing.assert_array_equal(dw, [2.0, 1.0, 3.0])
    assert strong_zero.reruns(where_sqrt) == before + 1


@njit
def in_place(x, w):
    x[:] = np.where(x > 0, np.sqrt(x) * w, 0.0)


@njit
def grad_in_place(x, dx, w, dw):
    autodiff(in_place, Duplicated(x, dx), Duplicated(w, dw))


def test_in_place_primal_and_shadows_once():
    """x ends as a plain call leaves it (not written twice), dw accumulates exactly once."""
    x, w = X.copy(), np.array([1.0, 2.0, 3.0])
    plain = X.copy()
    in_place(plain, w)
    dx, dw = np.ones(3), np.full(3, 10.0)
    grad_in_place(x, dx, w, dw)
    np.testing.assert_array_equal(x, plain)
    np.testing.assert_array_equal(dw, [12.0, 10.0, 13.0])
    np.testing.assert_allclose(dx, [0.25, 0.0, 0.5])          # w / (2 sqrt(x)) where x > 0


@njit
def scaled(x, a):
    return np.sum(np.where(x > 0, np.sqrt(x) * a, 0.0))


@njit
def grad_scaled(x, a):
    return autodiff(scaled, Const(x), Active(a))


def test_active_scalar():
    assert grad_scaled(X, 1.5)[1] == 5.0


@njit
def root(x):
    return np.sqrt(x[0]) + x[1] * x[1]


@njit
def grad_root(x, dx):
    autodiff(root, Duplicated(x, dx))


def test_true_infinite_gradient_stays():
    dx = np.zeros(2)
    grad_root(np.array([0.0, 2.0]), dx)
    assert dx[0] == np.inf and dx[1] == 4.0


@njit
def decay(x, w):
    return np.exp(-x[0] * w[0])


@njit
def tangent_decay(x, tx, w, tw):
    return autodiff(decay, Duplicated(x, tx), Duplicated(w, tw), mode=Forward)


def test_forward_zero_tangent_times_inf():
    """d/dw exp(-x w) at w = inf is -x exp(-x w) = 0; x's zero tangent times w = inf was NaN."""
    assert tangent_decay(np.array([2.0]), np.zeros(1), np.array([np.inf]), np.ones(1)) == 0.0


@njit
def list_sum(xs, w):
    s = 0.0
    for x in xs:
        s += np.sum(np.where(x > 0, np.sqrt(x) * w, 0.0))
    return s


@njit
def grad_list(xs, dxs, w, dw):
    return autodiff(list_sum, Duplicated(xs, dxs), Duplicated(w, dw))


def test_typed_list_runs_guarded():
    """A typed List's items cannot be copied by the entry: the guarded variant runs at once."""
    xs = List([X.copy(), X.copy()])
    dxs = List([np.zeros(3), np.zeros(3)])
    dw = np.zeros(3)
    grad_list(xs, dxs, np.ones(3), dw)
    np.testing.assert_array_equal(dw, [4.0, 0.0, 6.0])
    np.testing.assert_allclose(dxs[0], [0.25, 0.0, 1 / 6])


def test_compile_gradient_entry_from_python_and_njit():
    grad = compile_gradient(where_sqrt, Const(X), Duplicated(np.ones(3), np.zeros(3))).entry
    dw = np.zeros(3)
    assert grad(X, np.array([1.0, 2.0, 3.0]), dw, 1.0) == ()
    np.testing.assert_array_equal(dw, [2.0, 0.0, 3.0])

    @njit
    def driver(xs, w):
        total = np.zeros(3)
        for i in range(xs.shape[0]):
            dw = np.zeros(3)
            grad(xs[i], w, dw, 2.0)
            total += dw
        return total

    xs = np.stack([X, np.abs(X)])
    np.testing.assert_array_equal(driver(xs, np.ones(3)), [8.0, 2.0, 12.0])


def test_compile_gradient_forward_entry():
    x, w = np.array([2.0]), np.array([np.inf])
    tangent = compile_gradient(decay, Duplicated(x, np.zeros(1)), Duplicated(w, np.ones(1)),
                               mode=Forward).entry
    value, (t,) = tangent(x, w, np.zeros(1), np.ones(1))
    assert value == 0.0 and t == 0.0


def test_compile_gradient_batched_entry():
    """Two seeds in one call: each lane is what a separate guarded call gives."""
    w = np.array([1.0, 2.0, 3.0])
    grad = compile_gradient(where_sqrt, Const(X),
                            BatchDuplicated(w, (np.zeros(3), np.zeros(3)))).entry
    d1, d2 = np.zeros(3), np.ones(3)
    grad(X, w, np.zeros(3), d1, d2, 1.0, 2.0)
    np.testing.assert_array_equal(d1, [2.0, 0.0, 3.0])
    np.testing.assert_array_equal(d2, [5.0, 1.0, 7.0])


def test_empty_arrays_through_both_entries():
    """Size 0: the copies and the check see no element (the stack copy has length 0)."""
    x, w = np.zeros(0), np.zeros(0)
    dw = np.zeros(0)
    grad_where_sqrt(x, w, dw)
    grad = compile_gradient(where_sqrt, Const(x), Duplicated(w, dw)).entry
    assert grad(x, w, dw, 1.0) == () and dw.shape == (0,)
    tangent = compile_gradient(decay, Duplicated(np.array([2.0]), np.zeros(1)),
                               Duplicated(np.array([1.0]), np.ones(1)), mode=Forward).entry
    value, (t,) = tangent(np.array([2.0]), np.array([1.0]), np.zeros(1), np.ones(1))
    assert np.isclose(t, -2.0 * np.exp(-2.0))             # d/dw exp(-x w) = -x exp(-x w)
