"""llsq: a linear least-squares objective over n sample points, and its gradient."""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, autodiff

from .protocol import Function


@njit
def primal(x, n):
    total = 0.0
    for i in range(n):
        t = -1.0 + i * 2.0 / (n - 1)
        inner = 1.0 if t > 0.0 else (-1.0 if t < 0.0 else 0.0)
        mul = 1.0
        for j in range(x.size):
            inner -= x[j] * mul
            mul *= t
        total += inner * inner
    return total / 2.0


@njit
def gradient(x, n):
    dx = np.zeros_like(x)
    autodiff(primal, Duplicated(x, dx), n)
    return dx


def prepare(raw):
    return np.array(raw["x"], dtype=np.float64), int(raw["n"])


FUNCTIONS = {
    "primal": Function(prepare, primal),
    "gradient": Function(prepare, gradient, post=lambda g: g.tolist()),
}
