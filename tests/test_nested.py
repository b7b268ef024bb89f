"""Nested differentiation: `autodiff` inside an @njit kernel that another `autodiff`
differentiates (enzyme_py/bridge/nested.py), in every combination of modes, as GradBench's
saddle and particle evals need."""
import numpy as np
from numba import njit

from enzyme_py import Active, Const, Duplicated, Forward, autodiff, check_gradient


@njit
def g(p, q, y):
    return p * y - y * y + q * np.sin(y)


@njit
def dg_rev(p, q, y):
    return autodiff(g, Const(p), Const(q), Active(y))[2]


@njit
def dg_fwd(p, q, y):
    return autodiff(g, Const(p), Const(q), Active(y, 1.0), mode=Forward)


@njit
def climb_rev(p, q):            # gradient ascent in y with the inner gradient in reverse mode
    y = 0.1
    for _ in range(20):
        y += 0.2 * dg_rev(p, q, y)
    return g(p, q, y) + y * p


@njit
def climb_fwd(p, q):            # ... in forward mode
    y = 0.1
    for _ in range(20):
        y += 0.2 * dg_fwd(p, q, y)
    return g(p, q, y) + y * p


def central(f, p, q, h=1e-6):
    return ((f(p + h, q) - f(p - h, q)) / (2 * h), (f(p, q + h) - f(p, q - h)) / (2 * h))


def test_every_combination_of_modes():
    for inner in (climb_rev, climb_fwd):
        fd = central(inner, 1.3, 0.4)
        rev = autodiff(inner, Active(1.3), Active(0.4))           # rr, rf
        np.testing.assert_allclose(rev, fd, rtol=1e-7)
        for k in range(2):                                         # fr, ff
            t = autodiff(inner, Active(1.3, float(k == 0)), Active(0.4, float(k == 1)),
                         mode=Forward)
            np.testing.assert_allclose(t, fd[k], rtol=1e-7)


def test_inner_gradient_at_a_fixed_point_is_zero():
    # 200 steps converge: y* solves dg/dy = 0, so d/dp g(p, y*(p)) = y* (envelope theorem)
    @njit
    def value_at_max(p, q):
        y = 0.1
        for _ in range(200):
            y += 0.2 * dg_rev(p, q, y)
        return g(p, q, y), y
    value, ystar = value_at_max(1.3, 0.4)
    d = autodiff(njit(lambda p, q: value_at_max(p, q)[0]), Active(1.3), Const(0.4))
    np.testing.assert_allclose(d[0], ystar, rtol=1e-9)


@njit
def energy(p, y):
    s = 0.0
    for i in range(y.size):
        s += p[i] * y[i] - y[i] * y[i] * (1.0 + 0.1 * np.sin(y[i] * p[i]))
    return s


@njit
def ascend(p, y, steps):        # arrays: the inner gradient's tape, shadows, an in-place update
    gy = np.zeros_like(y)
    for _ in range(steps):
        gy[:] = 0.0
        autodiff(energy, Const(p), Duplicated(y, gy))
        for i in range(y.size):
            y[i] += 0.2 * gy[i]
    return energy(p, y)


def test_arrays_both_modes_against_finite_differences():
    p, y0 = np.array([1.3, 0.7, -0.4]), np.array([0.1, 0.2, 0.3])
    assert check_gradient(ascend, Duplicated(p.copy(), np.zeros(3)),
                          Duplicated(y0.copy(), np.zeros(3)), 15, rng=1).passed
    dp = np.zeros(3)
    autodiff(ascend, Duplicated(p.copy(), dp), Duplicated(y0.copy(), np.zeros(3)), 15)
    for k in range(3):
        u = np.zeros(3)
        u[k] = 1.0
        t = autodiff(ascend, Duplicated(p.copy(), u), Duplicated(y0.copy(), np.zeros(3)), 15,
                     mode=Forward)
        np.testing.assert_allclose(t, dp[k], rtol=1e-10)
