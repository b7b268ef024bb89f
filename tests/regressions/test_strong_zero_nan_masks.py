"""NaN through masked products: a zero adjoint (or tangent) contributes exactly zero.

`np.nansum(b * s)` with s[0] = NaN gave db = [nan, 1.5] in reverse mode: the sum drops the NaN
term, so its adjoint is 0, and the reverse of `fmul` multiplied that 0 by s[0] = NaN (its rule was
marked linear and skipped the strong-zero guard). The same for `np.where(np.isnan(w), 0, x * w)`
and for a GARCH(2,1) likelihood that skips a missing observation. Forward mode gave NaN for a
zero tangent times an infinite value (1 / (x0 * w) with w = inf), and Hessian-vector products
missed every term whose adjoint is 0 at the point but not in a neighbourhood (exp(x0) * x1 at
x1 = 0: H[0, 1] came out 0, the Hessian asymmetric), because the old guard
`(d == 0) ? 0 : c` hid the derivative of d.

Fixed in ir_passes/rules/partials.py: the guard `(d == 0 and c is NaN) ? 0 : c` on every partial
that may be non-finite (fmul and fma included), in every mode; batched reverse mode reads it lane
by lane (transforms/forward/instructions.py).
"""
import math

import numpy as np
import pytest
from numba import njit

from enzyme_py import BatchDuplicated, Const, Duplicated, Forward, autodiff, hessian_vector_product


@njit
def nansum_prod(b, s):
    return np.nansum(b * s)


@njit
def where_isnan(x, w):
    return np.sum(np.where(np.isnan(w), 0.0, x * x * w))


@njit
def isnan_branch(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += 0.0 if np.isnan(w[i]) else x[i] * w[i]
    return s


@njit
def garch21(p, y):
    """Negative log-likelihood of a GARCH(2, 1) with mean mu; a NaN observation is skipped (in
    the recursion and, by np.where, in the sum)."""
    mu, omega, a1, a2, beta = p[0], p[1], p[2], p[3], p[4]
    n = y.shape[0]
    e = y - mu
    h = np.empty(n)
    prev = omega / (1.0 - a1 - a2 - beta)
    e1 = 0.0
    e2 = 0.0
    for t in range(n):
        prev = omega + a1 * e1 * e1 + a2 * e2 * e2 + beta * prev
        h[t] = prev
        e2 = e1
        e1 = 0.0 if np.isnan(e[t]) else e[t]
    return 0.5 * np.sum(np.where(np.isnan(e), 0.0, np.log(h) + e * e / h))


@njit
def inf_times_zero_tangent(x, w):
    s = 1.0 / (x[0] * w[0]) + x[1]
    return 0.0 if np.isinf(s) else s


def garch_data():
    y = np.array([0.3, -0.5, np.nan, 0.8, -0.2, 0.1, np.nan, -0.7, 0.4])
    p = np.array([0.05, 0.2, 0.15, 0.1, 0.6])
    return p, y


W = np.array([np.nan, 3.0, -1.5])
X = np.array([0.7, 2.0, -0.4])
CASES = {   # name: (kernel, x, const, analytic gradient)
    "nansum": (nansum_prod, np.array([2.0, 3.0]), np.array([np.nan, 1.5]), np.array([0.0, 1.5])),
    "where": (where_isnan, X, W, np.array([0.0, 2 * 2.0 * 3.0, 2 * -0.4 * -1.5])),
    "isnan_branch": (isnan_branch, X, W, np.array([0.0, 3.0, -1.5])),
    "garch": (garch21, *garch_data(), None),
}


def fd_gradient(f, x, c, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps * max(1.0, abs(x[i]))
        g[i] = (f(x + e, c) - f(x - e, c)) / (2 * e[i])
    return g


def expected_gradient(name):
    kernel, x, c, g = CASES[name]
    return g if g is not None else fd_gradient(kernel.py_func, x, c)


def reverse_gradient(kernel, x, c):
    dx = np.zeros_like(x)
    autodiff(kernel, Duplicated(x.copy(), dx), Const(c))
    return dx


@pytest.mark.parametrize("name", sorted(CASES))
def test_reverse(name):
    kernel, x, c, _ = CASES[name]
    np.testing.assert_allclose(reverse_gradient(kernel, x, c), expected_gradient(name),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward(name):
    kernel, x, c, _ = CASES[name]
    g = expected_gradient(name)
    for i in range(x.size):
        v = np.zeros_like(x)
        v[i] = 1.0
        t = autodiff(kernel, Duplicated(x.copy(), v), Const(c), mode=Forward)
        t = t[0] if isinstance(t, tuple) else t
        assert float(t) == pytest.approx(g[i], rel=1e-6, abs=1e-9), i


@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_reverse(name):
    kernel, x, c, _ = CASES[name]
    g = expected_gradient(name)
    lanes = (np.zeros_like(x), np.zeros_like(x))
    autodiff(kernel, BatchDuplicated(x.copy(), lanes), Const(c), seed=(1.0, -2.0))
    np.testing.assert_allclose(lanes[0], g, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(lanes[1], -2.0 * g, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hessian_vector_product(name):
    kernel, x, c, _ = CASES[name]
    v = np.linspace(0.5, -0.3, x.size)
    hv = hessian_vector_product(kernel, x, v, c)
    eps = 1e-5
    fd = (reverse_gradient(kernel, x + eps * v, c) - reverse_gradient(kernel, x - eps * v, c)) / (2 * eps)
    assert np.all(np.isfinite(fd))
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-7)


def test_forward_zero_tangent_times_infinity():
    """d/dx1 of 1 / (x0 * w) + x1 with w = inf is 1: the zero tangent of x0 times w is 0."""
    x, w = np.array([2.0, 5.0]), np.array([np.inf])
    t = autodiff(inf_times_zero_tangent, Duplicated(x, np.array([0.0, 1.0])), Const(w), mode=Forward)
    t = t[0] if isinstance(t, tuple) else t
    assert float(t) == 1.0


@njit
def exp_times(x):
    return np.exp(x[0]) * x[1]


def test_hvp_adjoint_zero_at_the_point():
    """At x1 = 0 the adjoint of exp(x0) is 0 but moves with x1: H[0, 1] = exp(x0)."""
    x = np.array([0.5, 0.0])
    hv = hessian_vector_product(exp_times, x, np.array([0.0, 1.0]))
    np.testing.assert_allclose(hv, [math.exp(0.5), 0.0], rtol=1e-14)


@njit
def dot_with(x, w):
    return 0.0 if np.isnan(x[0]) else x[0] * w[0] + x[1] * w[1]


def test_batched_lanes_match_separate_calls_at_nan():
    """Each lane is what a call with its seed gives: NaN from seed 1 times w = NaN, 0 from seed 0."""
    x, w = np.array([1.0, 2.0]), np.array([np.nan, 2.0])
    separate = []
    for seed in (1.0, 0.0):
        dx = np.zeros(2)
        autodiff(dot_with, Duplicated(x.copy(), dx), Const(w), seed=seed)
        separate.append(dx)
    lanes = (np.zeros(2), np.zeros(2))
    autodiff(dot_with, BatchDuplicated(x.copy(), lanes), Const(w), seed=(1.0, 0.0))
    np.testing.assert_array_equal(separate[0], [np.nan, 2.0])
    np.testing.assert_array_equal(separate[1], [0.0, 0.0])
    for lane, dx in zip(lanes, separate):
        np.testing.assert_array_equal(lane, dx)


@njit
def masked_dot(a, b):
    s = np.dot(a, b)
    return (0.0 if np.isnan(s) else s) + np.sum(a * a)


@njit
def masked_norm(a, b):
    s = np.linalg.norm(a * b)
    return (0.0 if np.isinf(s) else s) + a[0]


def test_blas_dot_adjoint_zero_times_nan():
    """dot's adjoint dx += d * y with d = 0 (the select drops the dot) and y[0] = NaN."""
    a, b = np.array([1.0, 2.0, 3.0]), np.array([np.nan, 1.0, 2.0])
    np.testing.assert_array_equal(reverse_gradient(masked_dot, a, b), 2 * a)
    lanes = (np.zeros(3), np.zeros(3))
    autodiff(masked_dot, BatchDuplicated(a.copy(), lanes), Const(b), seed=(1.0, 2.0))
    np.testing.assert_array_equal(lanes[0], 2 * a)
    np.testing.assert_array_equal(lanes[1], 4 * a)
    hv = hessian_vector_product(masked_dot, a, np.array([1.0, 0.0, 0.0]), b)
    np.testing.assert_array_equal(hv, [2.0, 0.0, 0.0])


def test_blas_nrm2_adjoint_zero_times_inf():
    """nrm2's adjoint d * x / |x| with d = 0 and |x| = inf."""
    a, b = np.array([1.0, 2.0, 3.0]), np.array([np.inf, 1.0, 2.0])
    np.testing.assert_array_equal(reverse_gradient(masked_norm, a, b), [1.0, 0.0, 0.0])
