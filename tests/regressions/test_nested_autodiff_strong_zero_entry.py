"""Fixed: differentiating an @njit function that calls `autodiff` was refused in every mode.

`autodiff` in @njit code runs the gradient through a strong-zero entry (modes/strong_zero_entry.py):
array copies, and a rerun from an object-mode block on an inf or NaN, which AD cannot follow
("call to external function `PyFloat_FromDouble`", "differentiable memory is copied into memory
that has no shadow"). The capture now links the guarded gradient, called straight, in the
entry's place (bridge/capture.capture_as): the derivatives the entry gives, in code AD follows.
Checked on N-body (its reverse sweep has irreducible control flow after cleanup): forward over
reverse against central differences of the gradient and against hessian_vector_product.
"""
import numpy as np
from numba import njit

from enzyme_py import (Const, Duplicated, Forward, autodiff, compile_gradient,
                       hessian_vector_product)


@njit
def nbody(pos, vel, mass, dt, steps):
    n = pos.shape[0]
    for _ in range(steps):
        for i in range(n):
            for j in range(n):
                if i != j:
                    dx = pos[j, 0] - pos[i, 0]
                    dy = pos[j, 1] - pos[i, 1]
                    r2 = dx * dx + dy * dy + 0.1
                    s = dt * mass[j] / (r2 * np.sqrt(r2))
                    vel[i, 0] += s * dx
                    vel[i, 1] += s * dy
        for i in range(n):
            pos[i, 0] += dt * vel[i, 0]
            pos[i, 1] += dt * vel[i, 1]


@njit
def gradient(pos, vel, mass, spos, svel, smass):
    autodiff(nbody, Duplicated(pos, spos), Duplicated(vel, svel), Duplicated(mass, smass),
             Const(0.05), Const(3))


@njit
def energy(pos, mass):
    e = 0.0
    for i in range(pos.shape[0]):
        for j in range(pos.shape[0]):
            if i != j:
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                e -= mass[i] * mass[j] / np.sqrt(dx * dx + dy * dy + 0.1)
    return e


@njit
def energy_gradient(pos, spos, mass):
    autodiff(energy, Duplicated(pos, spos), Const(mass))


def grad_of(pos, vel, mass, seed_pos, seed_vel):
    s = [seed_pos.copy(), seed_vel.copy(), np.zeros_like(mass)]
    gradient(pos.copy(), vel.copy(), mass.copy(), *s)
    return s


def test_forward_over_nbody_gradient():
    rng = np.random.default_rng(1)
    pos, vel, mass = rng.standard_normal((4, 2)), 0.1 * rng.standard_normal((4, 2)), 1 + rng.random(4)
    seed_pos, seed_vel = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    v = [rng.standard_normal((4, 2)), rng.standard_normal((4, 2)), rng.standard_normal(4)]
    args = [pos.copy(), vel.copy(), mass.copy(), seed_pos.copy(), seed_vel.copy(), np.zeros(4)]
    # pos and vel are updated in place: their shadows leave holding the final tangents
    tangents = [t.copy() for t in v] + [np.zeros((4, 2)), np.zeros((4, 2)), np.zeros(4)]
    autodiff(gradient, *[Duplicated(a, t) for a, t in zip(args, tangents)], mode=Forward)
    h = 1e-6
    plus = grad_of(pos + h * v[0], vel + h * v[1], mass + h * v[2], seed_pos, seed_vel)
    minus = grad_of(pos - h * v[0], vel - h * v[1], mass - h * v[2], seed_pos, seed_vel)
    for got, p, m in zip(tangents[3:], plus, minus):
        np.testing.assert_allclose(got, (p - m) / (2 * h), rtol=1e-6, atol=1e-8)


def test_forward_over_energy_gradient_is_hvp_mode():
    rng = np.random.default_rng(2)
    pos, mass, v = rng.standard_normal((4, 2)), 1 + rng.random(4), rng.standard_normal((4, 2))
    hv = np.zeros((4, 2))
    autodiff(energy_gradient, Duplicated(pos.copy(), v.copy()), Duplicated(np.zeros((4, 2)), hv),
             Const(mass), mode=Forward)
    np.testing.assert_allclose(hv, hessian_vector_product(energy, pos, v, mass), rtol=1e-10,
                               atol=1e-12)


def test_forward_over_a_compile_gradient_entry():
    """compile_gradient's entry is checked too (its guarded variant built with it)."""
    rng = np.random.default_rng(3)
    pos, mass, v = rng.standard_normal((4, 2)), 1 + rng.random(4), rng.standard_normal((4, 2))
    entry = compile_gradient(energy, Duplicated(pos, np.zeros_like(pos)), Const(mass)).entry

    @njit
    def outer(pos, spos, mass):
        entry(pos, mass, spos, 1.0)

    hv = np.zeros((4, 2))
    autodiff(outer, Duplicated(pos.copy(), v.copy()), Duplicated(np.zeros((4, 2)), hv),
             Const(mass), mode=Forward)
    np.testing.assert_allclose(hv, hessian_vector_product(energy, pos, v, mass), rtol=1e-10,
                               atol=1e-12)
