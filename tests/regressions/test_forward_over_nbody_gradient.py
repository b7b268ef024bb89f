"""Fixed: forward mode over an @njit function calling an N-body gradient raised IrreducibleError.

The reverse sweep of the pairwise loop (`if i != j`) has a cycle with two entries, and so has the
calling function after cleanup; fold-sign-tests' non-negative analysis asked for natural loops
(only to find loop counters) and raised. It now knows no counters there. The tangent of the
gradient matches central differences of the gradient and hessian_vector_product (hvp mode).
"""
import numpy as np
from numba import njit

from enzyme_py import Const, Duplicated, Forward, autodiff, compile_gradient, hessian_vector_product


@njit
def energy(pos, mass):
    n = pos.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(n):
            if i != j:
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                r2 = dx * dx + dy * dy + 0.1
                e -= mass[i] * mass[j] / np.sqrt(r2)
    return e


def setup():
    rng = np.random.default_rng(1)
    pos, mass = rng.standard_normal((4, 2)), 1 + rng.random(4)
    g = compile_gradient(energy, Duplicated(pos, np.zeros_like(pos)), Const(mass))
    entry = g.entry.unchecked       # the gradient alone: forward mode differentiates its code

    @njit
    def gradient(pos, spos, mass):
        entry(pos, mass, spos, 1.0)

    return rng, pos, mass, gradient


def grad_of(gradient, pos, mass):
    s = np.zeros_like(pos)
    gradient(pos.copy(), s, mass)
    return s


def test_forward_over_nbody_gradient():
    rng, pos, mass, gradient = setup()
    v = rng.standard_normal((4, 2))
    hv = np.zeros((4, 2))
    autodiff(gradient, Duplicated(pos.copy(), v.copy()), Duplicated(np.zeros((4, 2)), hv),
             Const(mass), mode=Forward)
    h = 1e-6
    fd = (grad_of(gradient, pos + h * v, mass) - grad_of(gradient, pos - h * v, mass)) / (2 * h)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hv, hessian_vector_product(energy, pos, v, mass), rtol=1e-10,
                               atol=1e-12)
