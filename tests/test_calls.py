"""Calls as real callers write them (issue 14): array and tuple returns and their seeds, the
primal value on request, Enzyme.jl's argument order, keyword arguments and defaults, tuple
arguments, jitclass instances and lists, and batches wider than 16 lanes. Every derivative is
checked against analytic values or central finite differences computed here.
"""
import math
from collections import namedtuple

import numba
import numpy as np
import pytest
from numba import njit
from numba.experimental import jitclass

from enzyme_py import (Active, BatchDuplicated, Const, Duplicated, Forward, ForwardWithPrimal,
                       Reverse, ReverseWithPrimal, autodiff, check_gradient)

rng = np.random.default_rng(14)


def fd_grad(fun, x, h=1e-6):
    """Central differences of a scalar function of an array (test reference)."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        g.flat[k] = (fun(x + e) - fun(x - e)) / (2 * h)
    return g


# ---- array and tuple returns ----------------------------------------------------------------

@njit
def smooth_new(x):
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        y[i] = math.tanh(x[i]) * x[i]
    return y


@njit
def filter_into(params, r, sigma2):
    sigma2[0] = params[0] / (1.0 - params[1] - params[2])
    for t in range(1, r.shape[0]):
        sigma2[t] = params[0] + params[1] * r[t - 1] ** 2 + params[2] * sigma2[t - 1]
    return sigma2


@njit
def stats(x):
    m = 0.0
    for v in x:
        m += v
    m /= x.shape[0]
    return m, (x - m) ** 2, x.shape[0]


@njit
def nested(x):
    return (x[0] * x[1], (np.sin(x), 7)), x[2] ** 3


def test_new_array_return_with_seed():
    x, w = rng.standard_normal(5), rng.standard_normal(5)
    dx = np.zeros(5)
    assert autodiff(smooth_new, Duplicated(x, dx), seed=w) == (None,)
    np.testing.assert_allclose(dx, w * (np.tanh(x) + x * (1 - np.tanh(x) ** 2)), rtol=1e-13)


def test_returned_argument_gets_both_terms():
    p, r = np.array([0.1, 0.2, 0.5]), rng.standard_normal(8)
    w, v = rng.standard_normal(8), rng.standard_normal(8)
    dp, s, ds = np.zeros(3), np.zeros(8), v.copy()
    autodiff(filter_into, Duplicated(p, dp), r, Duplicated(s, ds), seed=w)
    exact = fd_grad(lambda q: (w + v) @ filter_into(q, r, np.zeros(8)), p)
    np.testing.assert_allclose(dp, exact, rtol=1e-7)
    np.testing.assert_array_equal(ds, 0.0)        # fully overwritten: consumed


def test_seed_that_is_a_shadow_is_read_before_it_is_consumed():
    p, r, w = np.array([0.1, 0.2, 0.5]), rng.standard_normal(8), rng.standard_normal(8)
    dp, s, ds = np.zeros(3), np.zeros(8), w.copy()
    autodiff(filter_into, Duplicated(p, dp), r, Duplicated(s, ds), seed=ds)
    exact = fd_grad(lambda q: 2 * w @ filter_into(q, r, np.zeros(8)), p)
    np.testing.assert_allclose(dp, exact, rtol=1e-7)


def test_tuple_return_float_array_int():
    x, w = rng.standard_normal(6), rng.standard_normal(6)
    dx = np.zeros(6)
    autodiff(stats, Duplicated(x, dx), seed=(2.0, w, None))

    def L(z):
        m, d, _ = stats(z)
        return 2.0 * m + w @ d
    np.testing.assert_allclose(dx, fd_grad(L, x), rtol=1e-7)


def test_nested_tuple_return_and_zero_leaves():
    x = np.array([0.3, -1.2, 0.7])
    w = rng.standard_normal(3)
    dx = np.zeros(3)
    autodiff(nested, Duplicated(x, dx), seed=((1.5, (w, None)), None))
    np.testing.assert_allclose(dx, [1.5 * x[1] + w[0] * math.cos(x[0]),
                                    1.5 * x[0] + w[1] * math.cos(x[1]), w[2] * math.cos(x[2])],
                               rtol=1e-14)


def test_float_return_keeps_its_default_seed():
    @njit
    def total(x):
        return np.sum(x ** 2)
    x, dx = np.arange(3.0), np.zeros(3)
    autodiff(total, Duplicated(x, dx))
    np.testing.assert_array_equal(dx, 2 * x)
    autodiff(total, Duplicated(x, dx), seed=None)    # left out of L: nothing added
    np.testing.assert_array_equal(dx, 2 * x)


@pytest.mark.parametrize("seed, error, match", [
    ("unset", TypeError, "pass seed= an array of the returned shape"),
    (1.0, TypeError, "must be an array"),
    (np.ones(4), ValueError, "shape"),
    (np.ones((5, 1)), ValueError, "dimensions"),
    ((np.ones(5),), TypeError, "tuple"),
])
def test_array_return_seed_errors(seed, error, match):
    x, dx = np.ones(5), np.zeros(5)
    with pytest.raises(error, match=match):
        if isinstance(seed, str):
            autodiff(smooth_new, Duplicated(x, dx))
        else:
            autodiff(smooth_new, Duplicated(x, dx), seed=seed)
    np.testing.assert_array_equal(dx, 0.0)


def test_tuple_return_seed_errors():
    x = np.ones(4)
    with pytest.raises(TypeError, match=r"seed=\(1\.0, w, None\)"):
        autodiff(stats, Duplicated(x, np.zeros(4)))
    with pytest.raises(TypeError, match="carries no derivative"):
        autodiff(stats, Duplicated(x, np.zeros(4)), seed=(1.0, np.ones(4), 1.0))


def test_unseedable_returns_are_refused_unless_left_out():
    @njit
    def complex_ret(x):
        return x[0] * 1j

    @njit
    def list_ret(x):
        return [x[0], x[1]]
    x = np.array([2.0, 3.0])
    with pytest.raises(TypeError, match="cannot be seeded"):
        autodiff(list_ret, Duplicated(x, np.zeros(2)))
    with pytest.raises(TypeError, match="complex number"):     # a complex return needs its seed
        autodiff(complex_ret, Duplicated(x, np.zeros(2)))
    dx = np.zeros(2)
    autodiff(complex_ret, Duplicated(x, dx), seed=None)
    np.testing.assert_array_equal(dx, 0.0)
    autodiff(complex_ret, Duplicated(x, dx), seed=1j)         # L = Im(x[0] * 1j) = x[0]
    np.testing.assert_array_equal(dx, [1.0, 0.0])


# ---- the primal value, Enzyme.jl's argument order -------------------------------------------

def test_reverse_with_primal():
    x, w = rng.standard_normal(5), rng.standard_normal(5)
    dx = np.zeros(5)
    (res, value) = autodiff(smooth_new, Duplicated(x, dx), seed=w, mode=ReverseWithPrimal)
    assert res == (None,)
    np.testing.assert_array_equal(value, smooth_new(x))

    @njit
    def energy(k, x):
        return 0.5 * k * np.sum(x ** 2)
    (dk, _), e = autodiff(ReverseWithPrimal, energy, Active(2.0), Duplicated(x, np.zeros(5)))
    assert e == energy(2.0, x) and dk == pytest.approx(0.5 * np.sum(x ** 2), rel=1e-15)
    # a tuple return: float leaves are given back too
    res, value = autodiff(stats, Duplicated(x, np.zeros(5)), seed=(1.0, None, None),
                          mode=ReverseWithPrimal)
    m, d, n = stats(x)
    assert value[0] == m and n == value[2] == 5
    np.testing.assert_array_equal(value[1], d)


def test_enzyme_jl_argument_order():
    @njit
    def f(a, x):
        return a * np.sum(np.sin(x))
    x = np.linspace(0, 1, 4)
    assert autodiff(Reverse, f, Active(2.0), x) == autodiff(f, Active(2.0), x)
    t = autodiff(Forward, f, Active(2.0, 1.0), x)
    assert t == pytest.approx(np.sum(np.sin(x)), rel=1e-15)
    with pytest.raises(ValueError, match="also given mode"):
        autodiff(Reverse, f, Active(2.0), x, mode=Forward)


# ---- keyword arguments and defaults ---------------------------------------------------------

@njit
def kepler(M, e, tol=1e-13, maxiter=64):
    E = M if e < 0.8 else math.pi
    for _ in range(maxiter):
        d = (E - e * math.sin(E) - M) / (1.0 - e * math.cos(E))
        E -= d
        if abs(d) < tol:
            break
    return E


def test_defaults_left_to_numba():
    M, e = 1.1, 0.3
    E = kepler(M, e)
    dM, de, *_ = autodiff(kepler, Active(M), Active(e))
    assert dM == pytest.approx(1 / (1 - e * math.cos(E)), rel=1e-12)
    assert de == pytest.approx(math.sin(E) / (1 - e * math.cos(E)), rel=1e-12)
    # the value is the plain call's, bit for bit
    (_, value) = autodiff(kepler, Active(M), Active(e), mode=ReverseWithPrimal)
    assert value == E
    # a default given explicitly, by keyword, and out of order
    assert autodiff(kepler, Active(M), Active(e), maxiter=2)[:2] != (dM, de)
    assert autodiff(kepler, e=Active(e), M=Active(M)) == (de, dM)
    assert autodiff(kepler, Active(M), e=Active(e), tol=1e-13) == (dM, de, None)


def test_default_that_numba_folds_as_a_constant():
    @njit
    def scaled(x, k=3):
        s = 0.0
        for i in range(k):          # Numba types k as Omitted(3): the trip count is a constant
            s += x[i] ** 2
        return s
    x, dx = np.arange(1.0, 6.0), np.zeros(5)
    autodiff(scaled, Duplicated(x, dx))
    np.testing.assert_array_equal(dx, [2, 4, 6, 0, 0])
    dx[:] = 0
    autodiff(scaled, Duplicated(x, dx), k=5)
    np.testing.assert_array_equal(dx, 2 * x)


def test_keyword_arguments_in_forward_mode_and_check_gradient():
    t = autodiff(kepler, Active(1.1, 1.0), e=Active(0.3, 0.0), mode=Forward)
    assert t == pytest.approx(autodiff(kepler, Active(1.1), Active(0.3))[0], rel=1e-13)
    rep = check_gradient(kepler, Active(1.1), e=Active(0.3), tol=1e-13)
    assert rep.passed, str(rep)
    assert rep["e"].kind == "Active" and rep[1] is rep["e"]


def test_bad_calls_name_the_signature():
    with pytest.raises(TypeError, match=r"kepler\(M, e, tol=1e-13, maxiter=64\).*missing"):
        autodiff(kepler, Active(1.0))
    with pytest.raises(TypeError, match="unexpected keyword"):
        autodiff(kepler, Active(1.0), Active(0.2), tolerance=1e-3)


def test_explicit_signature_with_a_default_is_refused_like_numba():
    @njit("f8(f8, f8, f8)")
    def sig(x, a, b=2.0):
        return a * x * b
    with pytest.raises(TypeError, match="declared signatures"):
        autodiff(sig, Active(1.0), Active(3.0))
    assert autodiff(sig, Active(1.0), Active(3.0), 2.0) == (6.0, 2.0, None)


# ---- tuple arguments, jitclass, lists -------------------------------------------------------

@njit
def weighted(ab, c):
    a, b = ab
    return np.sum(a * b) * c


Pair = namedtuple("Pair", "a b")


def test_tuple_argument_duplicated_and_active():
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    da, db = np.zeros(4), np.zeros(4)
    res = autodiff(weighted, Duplicated((a, b), (da, db)), Active(2.0))
    assert res == (None, pytest.approx(np.sum(a * b), rel=1e-14))
    np.testing.assert_allclose(da, 2 * b, rtol=1e-15)
    np.testing.assert_allclose(db, 2 * a, rtol=1e-15)

    @njit
    def poly(cs, x):
        c0, (c1, c2) = cs
        return c0 + c1 * x + c2 * x * x
    res = autodiff(poly, Active((1.0, (2.0, 3.0))), Active(0.5))
    assert res == ((1.0, (0.5, 0.25)), 2.0 + 2 * 3.0 * 0.5)


def test_namedtuple_argument_and_const_leaves():
    a, b = np.arange(3.0), np.ones(3)
    da = np.zeros(3)
    autodiff(weighted, Duplicated(Pair(a, b), Pair(da, None)), 1.0)
    np.testing.assert_array_equal(da, b)
    rep = check_gradient(weighted, Duplicated(Pair(a, b), Pair(np.zeros(3), np.zeros(3))),
                         Active(1.5))
    assert rep.passed, str(rep)
    assert [r.label for r in rep[0]] == ["ab[0]", "ab[1]"]


def test_tuple_argument_structure_errors():
    a = np.ones(2)
    with pytest.raises(TypeError, match="tuple of 2"):
        autodiff(weighted, Duplicated((a, a), np.zeros(2)), 1.0)


@jitclass([("k", numba.float64), ("w", numba.float64[:])])
class Spring:
    def __init__(self, k, w):
        self.k = k
        self.w = w


@njit
def spring_energy(s, x):
    e = 0.0
    for i in range(x.shape[0]):
        e += 0.5 * s.k * s.w[i] * x[i] ** 2
    return e


def test_jitclass_const_works_and_differentiated_is_a_clear_error():
    s, x, dx = Spring(2.0, np.ones(3)), np.arange(3.0), np.zeros(3)
    autodiff(spring_energy, Const(s), Duplicated(x, dx))
    np.testing.assert_array_equal(dx, 2.0 * x)
    for ann in (Active(s), Duplicated(s, s)):
        with pytest.raises(TypeError, match="jitclass instance.*Pass the instance as Const"):
            autodiff(spring_energy, ann, Duplicated(x, dx))


def test_lists_are_refused_where_a_shadow_is_needed():
    with pytest.raises(TypeError, match="list.*np.asarray"):
        autodiff(smooth_new, Duplicated([1.0, 2.0], np.zeros(2)), seed=np.ones(2))


# ---- wide batches ---------------------------------------------------------------------------

@njit
def square_acc(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] ** 2 + y[i]


def test_forward_batch_wider_than_16_runs_in_chunks():
    n = 40
    x, y = np.arange(1.0, n + 1), np.ones(n)
    dys = tuple(np.zeros(n) for _ in range(n))
    autodiff(square_acc, BatchDuplicated(x, tuple(np.eye(n))), BatchDuplicated(y, dys),
             mode=Forward)
    np.testing.assert_array_equal(np.array(dys), np.diag(2 * x))
    np.testing.assert_array_equal(y, x ** 2 + 1)      # the primal ran once from its initial values


def test_reverse_batch_wider_than_16_runs_in_chunks():
    n = 35
    x, y = np.arange(1.0, n + 1), np.ones(n)
    dxs = tuple(np.zeros(n) for _ in range(n))
    autodiff(square_acc, BatchDuplicated(x, dxs), BatchDuplicated(y, tuple(np.eye(n))))
    np.testing.assert_array_equal(np.array(dxs), np.diag(2 * x))
    np.testing.assert_array_equal(y, x ** 2 + 1)

    @njit
    def scale(a, x):
        return a * np.sum(x)
    res = autodiff(scale, Active(2.0), BatchDuplicated(x, tuple(np.zeros(n) for _ in range(20))),
                   seed=tuple(float(k) for k in range(20)))
    assert res[0] == tuple(k * np.sum(x) for k in range(20))


# ---- forward mode of array and tuple returns ------------------------------------------------

def test_forward_mode_array_return():
    x, v = rng.standard_normal(5), rng.standard_normal(5)
    t = autodiff(smooth_new, Duplicated(x, v), mode=Forward)
    np.testing.assert_allclose(t, v * (np.tanh(x) + x * (1 - np.tanh(x) ** 2)), rtol=1e-13)
    t2, value = autodiff(ForwardWithPrimal, smooth_new, Duplicated(x, v))
    np.testing.assert_array_equal(t2, t)
    np.testing.assert_array_equal(value, smooth_new(x))
    ts = autodiff(smooth_new, BatchDuplicated(x, (v, 2 * v)), mode=Forward)
    np.testing.assert_array_equal(ts[0], t)
    np.testing.assert_allclose(ts[1], 2 * t, rtol=1e-15)


def test_forward_mode_tuple_return_and_returned_argument():
    x, v = rng.standard_normal(6), rng.standard_normal(6)
    tm, td, tn = autodiff(stats, Duplicated(x, v), mode=Forward)
    assert tm == pytest.approx(v.mean(), rel=1e-13) and tn is None
    np.testing.assert_allclose(td, 2 * (x - x.mean()) * (v - v.mean()), rtol=1e-12, atol=1e-14)
    p, r = np.array([0.1, 0.2, 0.5]), rng.standard_normal(8)
    s, ds = np.zeros(8), np.zeros(8)
    t = autodiff(filter_into, Duplicated(p, np.array([1.0, 0.0, 0.0])), r, Duplicated(s, ds),
                 mode=Forward)
    np.testing.assert_array_equal(t, ds)
    col = (filter_into(p + [1e-6, 0, 0], r, np.zeros(8))
           - filter_into(p - [1e-6, 0, 0], r, np.zeros(8))) / 2e-6
    np.testing.assert_allclose(t, col, rtol=1e-7)


def test_compiled_entries_refuse_array_returns():
    from enzyme_py import compile_gradient, forward_entry, gradient_entry
    x = np.ones(3)
    with pytest.raises(TypeError, match="seeds a float return only"):
        gradient_entry(smooth_new, Duplicated(x, np.zeros(3)))
    with pytest.raises(TypeError, match="seeds a float return only"):
        forward_entry(smooth_new, Duplicated(x, np.zeros(3)))
    with pytest.raises(TypeError, match="seeds a float return only"):
        compile_gradient(smooth_new, Duplicated(x, np.zeros(3)), mode=Forward)

    @njit
    def inside(x, dx):
        return autodiff(smooth_new, Duplicated(x, dx))
    with pytest.raises(numba.core.errors.TypingError, match="seeds a float return only"):
        inside(x, np.zeros(3))


def test_njit_autodiff_names_the_missing_defaults():
    @njit
    def loss(x, k=2.0):
        return k * np.sum(x ** 2)

    @njit
    def outer(x, dx):
        return autodiff(loss, Duplicated(x, dx))
    with pytest.raises(numba.core.errors.TypingError, match=r"loss\(x, k=2.0\) takes 2, not 1"):
        outer(np.ones(3), np.zeros(3))
