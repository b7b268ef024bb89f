"""The gradient-descent solver of GradBench's saddle and particle evals (its C++ tools' gd.hpp),
as @njit functions: `argmin(objective, gradient, x0, params, sign)` minimises
sign * objective(x, params), `gradient(x, params, g)` filling g with the objective's gradient
(sign -1: the argmax). The step starts at 1e-5, doubles after 10 accepted steps and halves
after a rejected one; it stops when the gradient or the step is at most 1e-5. saddle runs it at
two levels: the inner descent inside the outer one's objective."""
import numpy as np
from numba import njit


@njit
def _norm(v):
    return np.sqrt(np.sum(v * v))


@njit
def argmin(objective, gradient, x0, params, sign):
    x = x0.copy()
    fx = sign * objective(x, params)
    gx = np.zeros_like(x)
    gradient(x, params, gx)
    gx *= sign
    i, eta = 0, 1e-5
    while True:
        if _norm(gx) <= 1e-5:
            return x
        if i == 10:
            eta *= 2.0
            i = 0
            continue
        x_new = x - eta * gx
        if _norm(x - x_new) <= 1e-5:
            return x
        fx_new = sign * objective(x_new, params)
        if fx_new < fx:
            x, fx = x_new, fx_new
            gradient(x, params, gx)
            gx *= sign
            i += 1
        else:
            eta /= 2.0
            i = 0
