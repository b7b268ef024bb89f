"""The reverse-mode contract of `autodiff`, tested exactly.

L = sum over Duplicated arrays of <shadow as given, final array> + seed * return value.
Shadows enter holding dL/d(final value) and leave holding dL/d(initial value): they accumulate
(+=), the shadow of an overwritten location is consumed (zeroed), and primal arrays end exactly
as a plain call leaves them. The result tuple has a float for each Active argument, None
otherwise. A gradient is built once per (kernel, types, activity).
"""
import math

import numpy as np
import pytest
from numba import njit

import enzyme_py
from enzyme_py import Active, Const, Duplicated, DuplicatedNoNeed, autodiff

X = np.array([0.5, -1.25, 2.0, 0.75])
DX0 = np.array([0.1, -0.2, 0.3, 0.4])    # what the caller put in the input's shadow
DY0 = np.array([1.0, 2.0, -0.5, 0.25])   # seeds on the output's final value


@njit
def double_into(x, y):
    for i in range(x.shape[0]):
        y[i] = 2.0 * x[i]


@njit
def add_square_into(x, y):
    for i in range(x.shape[0]):
        y[i] += x[i] * x[i]


@njit
def sum_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


@njit
def sin_in_place(x):
    for i in range(x.shape[0]):
        x[i] = math.sin(x[i])


@njit
def write_even(x, y):
    for i in range(0, x.shape[0], 2):
        y[i] = x[i] * x[i]


@njit
def scaled(a, x, n, c, y):
    for i in range(n):
        y[i] = a * x[i] + c
    return a * a


def test_fully_overwritten_output_comes_back_zeroed():
    x, dx, y, dy = X.copy(), DX0.copy(), np.full(4, 7.0), DY0.copy()
    res = autodiff(double_into, Duplicated(x, dx), Duplicated(y, dy))
    assert res == (None, None)
    np.testing.assert_array_equal(dy, np.zeros(4))
    np.testing.assert_array_equal(dx, DX0 + 2.0 * DY0)
    np.testing.assert_array_equal(y, 2.0 * X)
    np.testing.assert_array_equal(x, X)


def test_accumulated_output_keeps_its_seed():
    y0 = np.array([1.0, 2.0, 3.0, 4.0])
    x, dx, y, dy = X.copy(), DX0.copy(), y0.copy(), DY0.copy()
    autodiff(add_square_into, Duplicated(x, dx), Duplicated(y, dy))
    np.testing.assert_array_equal(dy, DY0)        # y_final = y_initial + ..., so dL/dy_initial = dy
    np.testing.assert_allclose(dx, DX0 + 2.0 * X * DY0, rtol=1e-15)
    np.testing.assert_array_equal(y, y0 + X * X)


def test_unwritten_input_accumulates_onto_caller_shadow():
    x, dx = X.copy(), DX0.copy()
    autodiff(sum_squares, Duplicated(x, dx))
    np.testing.assert_allclose(dx, DX0 + 2.0 * X, rtol=1e-15)
    autodiff(sum_squares, Duplicated(x, dx))      # a second call adds again
    np.testing.assert_allclose(dx, DX0 + 4.0 * X, rtol=1e-15)


def test_overwritten_input_shadow_is_replaced():
    x, dx = X.copy(), DX0.copy()
    autodiff(sin_in_place, Duplicated(x, dx))
    np.testing.assert_allclose(dx, DX0 * np.cos(X), rtol=1e-15)   # consumed, not accumulated
    np.testing.assert_array_equal(x, np.sin(X))


def test_partially_written_output():
    x, dx, y, dy = X.copy(), DX0.copy(), np.full(4, 7.0), DY0.copy()
    autodiff(write_even, Duplicated(x, dx), Duplicated(y, dy))
    np.testing.assert_array_equal(dy, [0.0, DY0[1], 0.0, DY0[3]])
    np.testing.assert_allclose(dx, DX0 + np.array([2 * X[0] * DY0[0], 0, 2 * X[2] * DY0[2], 0]),
                               rtol=1e-15)
    np.testing.assert_array_equal(y, [X[0] ** 2, 7.0, X[2] ** 2, 7.0])


@pytest.mark.parametrize("kernel,make", [
    (double_into, lambda: (X.copy(), np.full(4, 7.0))),
    (add_square_into, lambda: (X.copy(), np.arange(4.0))),
    (sin_in_place, lambda: (X.copy(),)),
    (write_even, lambda: (X.copy(), np.full(4, 7.0))),
], ids=["overwrite", "accumulate", "in_place", "partial"])
def test_primal_arrays_end_as_a_plain_call_leaves_them(kernel, make):
    plain = make()
    kernel(*plain)
    arrays = make()
    autodiff(kernel, *[Duplicated(a, np.ones_like(a)) for a in arrays])
    for got, want in zip(arrays, plain):
        np.testing.assert_array_equal(got, want)


@njit
def const_scratch(x, w, y):
    for i in range(x.shape[0]):
        w[i] = 0.5 * i             # a Const array written with data that does not depend on x
        y[i] = x[i] * w[i]


def test_const_array_written_by_kernel_ends_as_plain_call():
    w_plain, y_plain = np.full(4, 9.0), np.zeros(4)
    const_scratch(X.copy(), w_plain, y_plain)
    x, dx, w, y, dy = X.copy(), DX0.copy(), np.full(4, 9.0), np.zeros(4), DY0.copy()
    autodiff(const_scratch, Duplicated(x, dx), Const(w), Duplicated(y, dy))
    np.testing.assert_array_equal(w, w_plain)
    np.testing.assert_array_equal(y, y_plain)
    np.testing.assert_allclose(dx, DX0 + 0.5 * np.arange(4) * DY0, rtol=1e-15)


def test_active_data_into_const_array_is_refused():
    x, dx, y = X.copy(), DX0.copy(), np.zeros(4)
    with pytest.raises(enzyme_py.UnsupportedError, match="(?i)const") as info:
        autodiff(double_into, Duplicated(x, dx), Const(y))
    assert "Duplicated" in str(info.value)     # says what to do
    np.testing.assert_array_equal(dx, DX0)


def test_result_tuple_and_bare_values_are_const():
    x, dx, y, dy = X.copy(), DX0.copy(), np.zeros(4), DY0.copy()
    res = autodiff(scaled, Active(1.5), Duplicated(x, dx), 3, 0.25, Duplicated(y, dy))
    assert isinstance(res, tuple) and len(res) == 5
    assert res[1:] == (None, None, None, None)
    assert isinstance(res[0], float)
    # L = <dy, y> + a^2 with y[:3] = a x + c; y[3] untouched
    assert res[0] == pytest.approx(float(np.dot(DY0[:3], X[:3])) + 2 * 1.5, rel=1e-14)
    np.testing.assert_allclose(dx, DX0 + np.r_[1.5 * DY0[:3], 0.0], rtol=1e-15)
    np.testing.assert_array_equal(dy, np.r_[0.0, 0.0, 0.0, DY0[3]])


def test_seed_scales_the_return_value_only():
    def run(seed):
        x, dx, y, dy = X.copy(), np.zeros(4), np.zeros(4), DY0.copy()
        res = autodiff(scaled, Active(1.5), Duplicated(x, dx), 4, 0.0, Duplicated(y, dy), seed=seed)
        return res[0], dx
    da1, dx1 = run(1.0)
    da0, dx0 = run(0.0)
    da3, dx3 = run(2.5)
    assert da1 - da0 == pytest.approx(2 * 1.5, rel=1e-14)
    assert da3 - da0 == pytest.approx(2.5 * 2 * 1.5, rel=1e-14)
    np.testing.assert_array_equal(dx0, dx1)    # the return does not depend on x


def test_duplicated_noneed_gives_the_same_shadows():
    out = []
    for ann in (Duplicated, DuplicatedNoNeed):
        x, dx, y, dy = X.copy(), DX0.copy(), np.zeros(4), DY0.copy()
        autodiff(double_into, Duplicated(x, dx), ann(y, dy))
        out.append((dx, dy))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


@njit
def fails_on_negative(x, y):
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            raise ValueError("negative input")
        y[i] = math.sqrt(x[i])


def test_kernel_exception_propagates_and_shadows_are_untouched():
    x, dx, y, dy = X.copy(), DX0.copy(), np.zeros(4), DY0.copy()
    with pytest.raises(ValueError, match="negative input"):
        autodiff(fails_on_negative, Duplicated(x, dx), Duplicated(y, dy))
    np.testing.assert_array_equal(dx, DX0)
    np.testing.assert_array_equal(dy, DY0)
    ok = np.abs(X)
    autodiff(fails_on_negative, Duplicated(ok, dx), Duplicated(y, dy))
    np.testing.assert_allclose(dx, DX0 + DY0 * 0.5 / np.sqrt(ok), rtol=1e-15)


@njit
def cached_kernel(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * 3.0


def test_repeat_call_does_not_recompile():
    def call(dtype=np.float64, n=4, ann=Duplicated):
        x, y = np.ones(n, dtype), np.zeros(n, dtype)
        return autodiff(cached_kernel, ann(x, np.zeros_like(x)), Duplicated(y, np.ones_like(y)))

    call()
    n0 = enzyme_py.compile_count()
    call()
    call(n=9)                                  # other sizes: same Numba types
    assert enzyme_py.compile_count() == n0
    call(ann=DuplicatedNoNeed)                 # primal not needed: a variant of its own, once
    call(ann=DuplicatedNoNeed, n=7)
    assert enzyme_py.compile_count() == n0 + 1
    n0 += 1
    call(dtype=np.float32)                     # new types: one new gradient
    assert enzyme_py.compile_count() == n0 + 1
    call(dtype=np.float32)
    assert enzyme_py.compile_count() == n0 + 1
    x, y = np.ones(4), np.zeros(4)
    autodiff(cached_kernel, Const(x), Duplicated(y, np.ones(4)))   # new activity
    assert enzyme_py.compile_count() == n0 + 2
