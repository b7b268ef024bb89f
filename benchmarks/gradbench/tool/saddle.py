"""saddle: min over x of max over y of f(x, y) = (x1^2 + y1^2) - (x2^2 + y2^2), both by
gradient descent (descent.py), the inner argmax's gradient inside the outer argmin's objective:
nested AD. `rr`, `rf`, `fr`, `ff` name the outer and the inner mode (r reverse, f forward); the
final argmax uses the inner mode."""
import numpy as np
from numba import njit

from enzyme_py import Active, Const, Forward, autodiff

from .descent import argmin
from .protocol import Function


@njit
def f(x1, y1, x2, y2):
    return (x1 * x1 + y1 * y1) - (x2 * x2 + y2 * y2)


@njit
def inner_objective(p2, p1):
    return f(p1[0], p1[1], p2[0], p2[1])


@njit
def inner_gradient_r(p2, p1, g):
    d = autodiff(f, Const(p1[0]), Const(p1[1]), Active(p2[0]), Active(p2[1]))
    g[0], g[1] = d[2], d[3]


@njit
def inner_gradient_f(p2, p1, g):
    g[0] = autodiff(f, Const(p1[0]), Const(p1[1]), Active(p2[0], 1.0), Active(p2[1], 0.0),
                    mode=Forward)
    g[1] = autodiff(f, Const(p1[0]), Const(p1[1]), Active(p2[0], 0.0), Active(p2[1], 1.0),
                    mode=Forward)


@njit
def max_r(p1x, p1y, sx, sy):
    p1 = np.array([p1x, p1y])
    y = argmin(inner_objective, inner_gradient_r, np.array([sx, sy]), p1, -1.0)
    return inner_objective(y, p1)


@njit
def max_f(p1x, p1y, sx, sy):
    p1 = np.array([p1x, p1y])
    y = argmin(inner_objective, inner_gradient_f, np.array([sx, sy]), p1, -1.0)
    return inner_objective(y, p1)


@njit
def outer_objective_r(p1, start):
    return max_r(p1[0], p1[1], start[0], start[1])


@njit
def outer_objective_f(p1, start):
    return max_f(p1[0], p1[1], start[0], start[1])


@njit
def outer_gradient_rr(p1, start, g):
    d = autodiff(max_r, Active(p1[0]), Active(p1[1]), Const(start[0]), Const(start[1]))
    g[0], g[1] = d[0], d[1]


@njit
def outer_gradient_rf(p1, start, g):
    d = autodiff(max_f, Active(p1[0]), Active(p1[1]), Const(start[0]), Const(start[1]))
    g[0], g[1] = d[0], d[1]


@njit
def outer_gradient_fr(p1, start, g):
    g[0] = autodiff(max_r, Active(p1[0], 1.0), Active(p1[1], 0.0), Const(start[0]),
                    Const(start[1]), mode=Forward)
    g[1] = autodiff(max_r, Active(p1[0], 0.0), Active(p1[1], 1.0), Const(start[0]),
                    Const(start[1]), mode=Forward)


@njit
def outer_gradient_ff(p1, start, g):
    g[0] = autodiff(max_f, Active(p1[0], 1.0), Active(p1[1], 0.0), Const(start[0]),
                    Const(start[1]), mode=Forward)
    g[1] = autodiff(max_f, Active(p1[0], 0.0), Active(p1[1], 1.0), Const(start[0]),
                    Const(start[1]), mode=Forward)


def _solver(outer_objective, outer_gradient, inner_gradient):
    @njit
    def solve(start):
        x = argmin(outer_objective, outer_gradient, start, start, 1.0)
        y = argmin(inner_objective, inner_gradient, start, x, -1.0)
        return np.concatenate((x, y))
    return solve


def prepare(raw):
    return (np.array(raw["start"], dtype=np.float64),)


SOLVERS = {"rr": _solver(outer_objective_r, outer_gradient_rr, inner_gradient_r),
           "rf": _solver(outer_objective_f, outer_gradient_rf, inner_gradient_f),
           "fr": _solver(outer_objective_r, outer_gradient_fr, inner_gradient_r),
           "ff": _solver(outer_objective_f, outer_gradient_ff, inner_gradient_f)}

FUNCTIONS = {name: Function(prepare, solve, post=lambda r: r.tolist())
             for name, solve in SOLVERS.items()}
