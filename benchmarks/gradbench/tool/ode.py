"""ode: s fourth-order Runge-Kutta steps of y' = f(x, y), f(x, y)_0 = x_0,
f(x, y)_i = x_i y_{i-1}, from y = 0 to t = 2, written into an output array in place (the C++
tools' ode.hpp, after cmpad); `gradient` is d y_final[n - 1] / dx by one reverse call, the
seed on the output's last element."""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, autodiff

from .protocol import Function


@njit
def _f(x, y, z):
    z[0] = x[0]
    for i in range(1, x.shape[0]):
        z[i] = x[i] * y[i - 1]


@njit
def integrate(x, s, yf):
    n = x.shape[0]
    h = 2.0 / s
    k1, k2, k3, k4, tmp = (np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n))
    yf[:] = 0.0
    for _ in range(s):
        _f(x, yf, k1)
        for i in range(n):
            tmp[i] = yf[i] + h * k1[i] / 2.0
        _f(x, tmp, k2)
        for i in range(n):
            tmp[i] = yf[i] + h * k2[i] / 2.0
        _f(x, tmp, k3)
        for i in range(n):
            tmp[i] = yf[i] + h * k3[i]
        _f(x, tmp, k4)
        for i in range(n):
            yf[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0


@njit
def primal(x, s):
    yf = np.empty_like(x)
    integrate(x, s, yf)
    return yf


@njit
def gradient(x, s):
    dx = np.zeros_like(x)
    yf, dyf = np.empty_like(x), np.zeros_like(x)
    dyf[-1] = 1.0
    autodiff(integrate, Duplicated(x, dx), s, Duplicated(yf, dyf))
    return dx


def prepare(raw):
    return np.array(raw["x"], dtype=np.float64), int(raw["s"])


FUNCTIONS = {
    "primal": Function(prepare, primal, post=lambda y: y.tolist()),
    "gradient": Function(prepare, gradient, post=lambda g: g.tolist()),
}
