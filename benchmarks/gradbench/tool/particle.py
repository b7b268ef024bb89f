"""particle: a charged particle's path (naive Euler steps until it crosses the x axis, an
unbounded loop) in the field of two charges, one placed by the control w; w minimises the
squared distance of the crossing from the origin by gradient descent (descent.py). The force is
the gradient of the potential, inside the objective whose gradient the descent takes: nested
AD. `rr`, `rf`, `fr`, `ff` name the descent's and the force's mode (r reverse, f forward)."""
import numpy as np
from numba import njit

from enzyme_py import Active, Const, Forward, autodiff

from .descent import argmin
from .protocol import Function


@njit
def potential(charges, x0, x1):
    p = 0.0
    for k in range(charges.shape[0]):
        p += 1.0 / np.sqrt((charges[k, 0] - x0) ** 2 + (charges[k, 1] - x1) ** 2)
    return p


@njit
def force_r(charges, x0, x1):
    d = autodiff(potential, Const(charges), Active(x0), Active(x1))
    return -d[1], -d[2]


@njit
def force_f(charges, x0, x1):
    a0 = autodiff(potential, Const(charges), Active(x0, 1.0), Active(x1, 0.0), mode=Forward)
    a1 = autodiff(potential, Const(charges), Active(x0, 0.0), Active(x1, 1.0), mode=Forward)
    return -a0, -a1


def _euler(force):
    @njit
    def miss(w):
        charges = np.empty((2, 2))
        charges[0, 0], charges[0, 1] = 10.0, 10.0 - w
        charges[1, 0], charges[1, 1] = 10.0, 0.0
        x0, x1, v0, v1, dt = 0.0, 8.0, 0.75, 0.0, 0.1
        while True:
            a0, a1 = force(charges, x0, x1)
            x0 += dt * v0
            x1 += dt * v1
            if x1 <= 0.0:
                t = -x1 / v1
                hit = x0 + t * v0
                return hit * hit
            v0 += dt * a0
            v1 += dt * a1
    return miss


miss_r, miss_f = _euler(force_r), _euler(force_f)


def _descent(miss, mode):
    @njit
    def objective(x, params):
        return miss(x[0])

    if mode == "r":
        @njit
        def gradient(x, params, g):
            g[0] = autodiff(miss, Active(x[0]))[0]
    else:
        @njit
        def gradient(x, params, g):
            g[0] = autodiff(miss, Active(x[0], 1.0), mode=Forward)

    @njit
    def solve(w0):
        return argmin(objective, gradient, w0, w0, 1.0)[0]
    return solve


def prepare(raw):
    return (np.array([float(raw["w"])]),)


SOLVERS = {"rr": _descent(miss_r, "r"), "rf": _descent(miss_f, "r"),
           "fr": _descent(miss_r, "f"), "ff": _descent(miss_f, "f")}

FUNCTIONS = {name: Function(prepare, solve) for name, solve in SOLVERS.items()}
