"""One @njit solver used at two levels of nested AD: the outer descent's objective calls
`autodiff` of a function that runs the same solver. When the inner gradient is built, the
solver's dispatcher is still compiling the outer call, so Numba types the inner call as a
`RecursiveCall` and emits it through an unresolved symbol named with the private copy's compile
flags; capture found neither (it followed only Dispatcher types, by exact name) and the build
failed with "call through the function pointer in `@.numba.unresolved$...descend...`". Capture
now follows RecursiveCall types and matches the name without its flags tag (bridge/capture.py).
"""
import numpy as np
from numba import njit

from enzyme_py import Active, Const, autodiff


@njit
def descend(step, x, p, steps, sign):
    for _ in range(steps):
        x = x - 0.1 * sign * step(x, p)
    return x


@njit
def g(p, y):
    return p * y - y * y


@njit
def dg(y, p):
    return autodiff(g, Const(p), Active(y))[1]


@njit
def inner_value(p):
    y = descend(dg, 0.1, p, 30, -1.0)       # ascent in y: y_k -> p / 2
    return g(p, y) + p * y


@njit
def d_inner(p, unused):
    return autodiff(inner_value, Active(p))[0]


@njit
def solve(p0):
    return descend(d_inner, p0, 0.0, 3, 1.0)


def test_same_solver_inside_and_outside_a_gradient():
    solve(1.0)                                  # builds d_inner while descend compiles
    for p in (0.7, 1.3):
        r = 0.8 ** 30
        y = p / 2 + (0.1 - p / 2) * r
        dy = 0.5 * (1 - r)
        expected = 2 * y + (2 * p - 2 * y) * dy   # d/dp (2 p y - y^2)
        np.testing.assert_allclose(d_inner(p, 0.0), expected, rtol=1e-12)
