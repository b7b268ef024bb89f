"""Gradient corpus: loops with dynamic trip counts, while loops, early exits, branches, Active
scalars, scalar returns (see test_kernels.py).
"""
import math

import numpy as np
import pytest
from numba import njit

from enzyme_py import Active, Const
from test_kernels_base import A, D, U, Corpus, garbage, run_case

corpus = Corpus()
case = corpus.case


# ---------------------------------------------------------------------------------------------
# Control flow: loops, early exits, branches, Active scalars, scalar returns
# ---------------------------------------------------------------------------------------------

@njit
def dot(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    return s


case("dot_return", dot, lambda r: [D(U(r, 8, -1, 1), r), D(U(r, 8, -1, 1), r)],
     lambda v, s, seed: {0: s[0] + seed * v[1], 1: s[1] + seed * v[0]}, seed=1.5)


@njit
def dynamic_trip(x, y, n):
    for i in range(n):
        y[i] = 0.5 * x[i] * x[i] + x[i]


def _dynamic_trip(v, s, seed):
    n = v[2]
    dx = s[0].copy()
    dx[:n] += s[1][:n] * (v[0][:n] + 1)
    dy = s[1].copy()
    dy[:n] = 0
    return {0: dx, 1: dy}


case("dynamic_trip_count", dynamic_trip, lambda r: [D(U(r, 8, -1, 1), r), D(garbage(r, 8), r), 5],
     _dynamic_trip)


@njit
def while_stride2(x, n):
    s = 0.0
    i = 0
    while i < n:
        s += 0.5 * x[i] * x[i]
        i += 2
    return s


def _while_stride2(v, s, seed):
    dx = s[0].copy()
    dx[0:v[1]:2] += seed * v[0][0:v[1]:2]
    return {0: dx}


case("while_loop", while_stride2, lambda r: [D(U(r, 9, -1, 1), r), 7], _while_stride2, seed=2.0)


@njit
def halve_until_small(a):
    k = 0
    while a > 1.0:
        a = a * 0.5
        k += 1
    return a * a + k


case("data_dependent_while_active", halve_until_small, lambda r: [Active(5.3)],
     lambda v, s, seed: {0: seed * 2 * (5.3 / 8) / 8})


@njit
def newton_sqrt(a):
    x = a
    for _ in range(60):
        xn = 0.5 * (x + a / x)
        if xn == x:
            break
        x = xn
    return x


case("newton_loop_break_active", newton_sqrt, lambda r: [Active(2.7)],
     lambda v, s, seed: {0: seed * 0.5 / math.sqrt(2.7)})


@njit
def sum_until(x, t):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > t:
            break
        s += x[i] * x[i]
    return s


def _sum_until(v, s, seed):
    dx = s[0].copy()
    dx[:4] += seed * 2 * v[0][:4]
    return {0: dx}


case("loop_break", sum_until,
     lambda r: [D(np.array([0.3, -0.5, 0.7, 0.1, 1.6, 0.2, 0.4]), r), 1.0], _sum_until)


@njit
def return_in_loop(x, w, lim):
    s = 0.0
    for i in range(x.shape[0]):
        s += w[i] * x[i]
        if s > lim:
            return 2.0 * s
    return s


def _return_in_loop(v, s, seed):
    dx = s[0].copy()
    dx[:4] += seed * 2.0 * v[1][:4]
    return {0: dx}


# partial sums of w*x: 0.5, 1.0, 1.5, 2.5 (> 2.2) -> returns at i = 3
case("return_inside_loop", return_in_loop,
     lambda r: [D(np.array([0.5, 1.0, 0.25, 2.0, 1.0, 3.0]), r),
                Const(np.array([1.0, 0.5, 2.0, 0.5, 1.0, 1.0])), 2.2],
     _return_in_loop)


@njit
def while_data_exit(x, target):
    s = 0.0
    i = 0
    while s < target and i < x.shape[0]:
        s += x[i] * x[i]
        i += 1
    return math.sqrt(s)


def _while_data_exit(v, s, seed):
    x = v[0]
    m = 3  # cumulative squares 0.64, 1.45, 2.54 >= 2.0
    tot = np.sum(x[:m] ** 2)
    dx = s[0].copy()
    dx[:m] += seed * x[:m] / math.sqrt(tot)
    return {0: dx}


case("data_dependent_while_exit", while_data_exit,
     lambda r: [D(np.array([0.8, -0.9, 1.044, 0.6, 0.7]), r), 2.0], _while_data_exit)


@njit
def piecewise(x, y):
    for i in range(x.shape[0]):
        v = x[i]
        if v < -0.5:
            y[i] = v * v
        elif v < 0.5:
            y[i] = math.sin(v)
        else:
            y[i] = math.exp(v)


def _piecewise(v, s, seed):
    x = v[0]
    d = np.where(x < -0.5, 2 * x, np.where(x < 0.5, np.cos(x), np.exp(x)))
    return {0: s[0] + s[1] * d, 1: np.zeros(x.shape)}


case("branches_if_elif_else", piecewise,
     lambda r: [D(np.array([-1.3, -0.8, -0.2, 0.1, 0.3, 0.8, 1.4]), r), D(garbage(r, 7), r)],
     _piecewise)


@njit
def active_mix(a, x, b, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] * x[i] + b / (1.0 + x[i] * x[i])


def _active_mix(v, s, seed):
    a, x, b = v[0], v[1], v[2]
    dy = s[3]
    return {0: float(np.sum(dy * x * x)), 2: float(np.sum(dy / (1 + x * x))),
            1: s[1] + dy * (2 * a * x - 2 * b * x / (1 + x * x) ** 2), 3: np.zeros(x.shape)}


case("active_scalars_with_arrays", active_mix,
     lambda r: [Active(1.3), D(U(r, 6, -1, 1), r), Active(-0.7), D(garbage(r, 6), r)], _active_mix)


@njit
def scalar_only(a, b, c):
    return a * math.exp(b) / (1.0 + c * c) + math.log(a) * b


def _scalar_only(v, s, seed):
    a, b, c = 1.3, 0.4, -0.6
    q = 1 + c * c
    return {0: seed * (math.exp(b) / q + b / a), 1: seed * (a * math.exp(b) / q + math.log(a)),
            2: seed * (-a * math.exp(b) * 2 * c / q ** 2)}


case("scalar_only_active", scalar_only, lambda r: [Active(1.3), Active(0.4), Active(-0.6)],
     _scalar_only, seed=0.8)


@njit
def scalar_mixed_const(a, n, c):
    s = 0.0
    for i in range(n):
        s += math.sin(a * (i + 1)) * c
    return s


case("scalar_loop_const_args", scalar_mixed_const, lambda r: [Active(0.3), 4, 1.5],
     lambda v, s, seed: {0: seed * sum(1.5 * (i + 1) * math.cos(0.3 * (i + 1)) for i in range(4))})


@njit
def recurrence(a, x, y):
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = a * y[i - 1] + x[i]


def _recurrence(v, s, seed):
    a, x = v[0], v[1]
    n = x.shape[0]
    y = np.zeros(n)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = a * y[i - 1] + x[i]
    # y[i] = sum_{j<=i} a^(i-j) x[j]
    J = np.array([[a ** (i - j) if j <= i else 0.0 for j in range(n)] for i in range(n)])
    dJ = np.array([[(i - j) * a ** (i - j - 1) if j < i else 0.0 for j in range(n)] for i in range(n)])
    return {0: float(s[2] @ dJ @ x), 1: s[1] + J.T @ s[2], 2: np.zeros(n)}


case("linear_recurrence", recurrence,
     lambda r: [Active(0.9), D(U(r, 6, -1, 1), r), D(garbage(r, 6), r)], _recurrence)


@njit
def logsumexp(x):
    m = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > m:
            m = x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += math.exp(x[i] - m)
    return m + math.log(s)


def _logsumexp(v, s, seed):
    e = np.exp(v[0] - v[0].max())
    return {0: s[0] + seed * e / e.sum()}


case("logsumexp", logsumexp, lambda r: [D(U(r, 7, -2, 2), r)], _logsumexp)


@njit
def horner(c, x):
    p = 0.0
    for k in range(c.shape[0]):
        p = p * x + c[k]
    return p


def _horner(v, s, seed):
    c, x = v[0], 0.7
    n = c.shape[0]
    powers = x ** np.arange(n - 1, -1, -1.0)
    dpx = sum(c[k] * (n - 1 - k) * x ** (n - 2 - k) for k in range(n - 1))
    return {0: s[0] + seed * powers, 1: seed * dpx}


case("horner_active_point", horner, lambda r: [D(U(r, 5, -1, 1), r), Active(0.7)], _horner)


@njit
def max_value(x):
    m = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > m:
            m = x[i]
    return m * m


def _max_value(v, s, seed):
    x = v[0]
    dx = s[0].copy()
    k = int(np.argmax(x))
    dx[k] += seed * 2 * x[k]
    return {0: dx}


case("argmax_branch", max_value, lambda r: [D(np.array([0.3, 1.2, -0.4, 1.9, 0.8, 1.5]), r)],
     _max_value, seed=0.6)


@njit
def int_pow_dynamic(x, y, n):
    for i in range(x.shape[0]):
        y[i] = x[i] ** n


case("int_power_dynamic_n3", int_pow_dynamic, lambda r: [D(U(r, 6, -2, 2), r), D(garbage(r, 6), r), 3],
     lambda v, s, seed: {0: s[0] + s[1] * 3 * v[0] ** 2, 1: np.zeros(6)})
case("int_power_dynamic_neg", int_pow_dynamic,
     lambda r: [D(A(r, 6, 0.4, 2), r), D(garbage(r, 6), r), -3],
     lambda v, s, seed: {0: s[0] + s[1] * -3 * v[0] ** -4.0, 1: np.zeros(6)})


@njit
def softplus_weighted(x, w, out):
    s = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        sp = v + math.log1p(math.exp(-v)) if v > 0 else math.log1p(math.exp(v))
        s += w[i] * sp
    out[0] = s


def _softplus(v, s, seed):
    x, w = v[0], v[1]
    return {0: s[0] + s[2][0] * w / (1 + np.exp(-x)), 2: np.zeros(1)}


case("softplus_select_to_output", softplus_weighted,
     lambda r: [D(A(r, 6, 0.2, 3), r), Const(U(r, 6, 0.5, 1.5)), D(garbage(r, 1), r)], _softplus)


@pytest.mark.parametrize("c", corpus.cases, ids=corpus.ids())
def test_kernel(c, monkeypatch):
    run_case(c, monkeypatch)
