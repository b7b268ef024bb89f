"""Kernels for tests/test_torch.py: elementwise, an RNN with `@`, the heat equation in place,
N-body forces; `calls` counts plain runs of `counted`."""
import numpy as np
from numba import njit


@njit
def elementwise(x, y, out):
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * y[i] + np.exp(-x[i] * x[i])


@njit
def rnn(W, U, xs, h, hs):
    """h (the state, overwritten each step) and hs (every step's state) written."""
    for t in range(xs.shape[0]):
        h[:] = np.tanh(W @ h + U @ xs[t])
        hs[t] = h


@njit
def heat(u0, u, alpha, steps):
    """Writes u: u0 advanced `steps` explicit steps, updated in place (ends fixed)."""
    n = u.shape[0]
    for i in range(n):
        u[i] = u0[i]
    for s in range(steps):
        left = u[0]
        for i in range(1, n - 1):
            ui = u[i]
            u[i] = ui + alpha * (left - 2.0 * ui + u[i + 1])
            left = ui


@njit
def heat_inplace(u, alpha, steps):
    n = u.shape[0]
    for s in range(steps):
        left = u[0]
        for i in range(1, n - 1):
            ui = u[i]
            u[i] = ui + alpha * (left - 2.0 * ui + u[i + 1])
            left = ui


@njit
def nbody(px, py, m, fx, fy):
    n = px.shape[0]
    for i in range(n):
        ax = 0.0
        ay = 0.0
        for j in range(n):
            if j == i:
                continue
            dx = px[j] - px[i]
            dy = py[j] - py[i]
            r2 = dx * dx + dy * dy + 1e-2
            inv3 = 1.0 / (r2 * np.sqrt(r2))
            s = m[j] * inv3
            ax += s * dx
            ay += s * dy
        fx[i] = m[i] * ax
        fy[i] = m[i] * ay


@njit
def counted(x, calls):
    calls[0] += 1
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i] * x[i]
    return s


@njit
def copy_and_sum(x, out):
    s = 0.0
    for i in range(x.shape[0]):
        out[i] = x[i]
        s += x[i]
    return s


@njit
def rnn_copy(W, U, xs, h0, hs):
    """The state starts as a copy of an input (`h = h0.copy()`) and is rebound each step."""
    h = h0.copy()
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
        hs[t] = h
