"""`@njit(parallel=True)` kernels with `prange`, written as scientific code writes them
(tests/test_parallel.py differentiates each against finite differences and against the
gradient of its serial copy, `serial(kernel)`)."""
import math
from functools import cache

import numpy as np
from numba import njit, pndindex, prange


@cache
def serial(kernel):
    """The serial copy of a parallel kernel, `njit(kernel.py_func)`, one per kernel: the tests
    that compare with it share its compile and its gradients."""
    return njit(kernel.py_func)


@njit(parallel=True)
def elementwise(x, y):
    for i in prange(x.shape[0]):
        y[i] = math.sin(x[i]) * x[i] + math.exp(-x[i] * x[i])


@njit(parallel=True)
def gather(x, pairs, y):
    """Many iterations read the same inputs: each edge reads both its nodes."""
    for e in prange(pairs.shape[0]):
        a, b = pairs[e, 0], pairs[e, 1]
        y[e] = x[a] * x[b] + math.tanh(x[a] - x[b])


@njit(parallel=True)
def weighted_sum(k, x):
    """A prange reduction returning a float, with an Active scalar."""
    s = 0.0
    for i in prange(x.shape[0]):
        s += k * math.sin(x[i]) + x[i] * x[i]
    return s


@njit(parallel=True)
def product(x):
    """A product reduction: refused (only sums are reversed on many threads)."""
    p = 1.0
    for i in prange(x.shape[0]):
        p *= x[i]
    return p


@njit(parallel=True)
def nbody_forces(pos, mass, force):
    """Pairwise softened gravity: each body sums the pull of all others into its own row."""
    n = pos.shape[0]
    for i in prange(n):
        fx = 0.0
        fy = 0.0
        fz = 0.0
        for j in range(n):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            r2 = dx * dx + dy * dy + dz * dz + 0.01
            w = mass[j] / (r2 * math.sqrt(r2))
            fx += w * dx
            fy += w * dy
            fz += w * dz
        force[i, 0] = mass[i] * fx
        force[i, 1] = mass[i] * fy
        force[i, 2] = mass[i] * fz


@njit(parallel=True)
def local_features(x, out):
    """A per-iteration temporary: each iteration fills its own small buffer."""
    for i in prange(x.shape[0]):
        buf = np.empty(3)
        buf[0] = x[i]
        buf[1] = x[i] * x[i]
        buf[2] = math.cos(x[i])
        out[i] = buf[0] * buf[1] + buf[2]


@njit
def soft_threshold(v, lam):
    return math.copysign(math.log1p(math.exp(abs(v) - lam)), v)


@njit(parallel=True)
def shrink(x, lam, y):
    """An @njit helper called from the body."""
    for i in prange(x.shape[0]):
        y[i] = soft_threshold(x[i], lam) * x[i]


@njit(parallel=True)
def heat(u, alpha, steps):
    """Explicit heat equation in place: a time loop around a prange over the interior."""
    n = u.shape[0]
    new = np.empty(n)
    for _ in range(steps):
        for i in prange(1, n - 1):
            new[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in prange(1, n - 1):
            u[i] = new[i]


@njit(parallel=True)
def heat_scratch(u, new, alpha, steps):
    """The heat equation in place, with the caller's scratch row: a time loop around two
    pranges."""
    n = u.shape[0]
    for _ in range(steps):
        for i in prange(1, n - 1):
            new[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in prange(1, n - 1):
            u[i] = new[i]


@njit(parallel=True)
def array_expression(x, w):
    """Array expressions and np.sum become parfors under parallel=True."""
    y = np.sin(x) * x + w * x * x
    return np.sum(y * y)


@njit(parallel=True)
def stencil2d(a, b):
    """A 5-point stencil on a 2-D grid; rows in parallel."""
    n, m = a.shape
    for i in prange(1, n - 1):
        for j in range(1, m - 1):
            b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) \
                - a[i, j] * a[i, j]


@njit(parallel=True)
def relax_rows(x, c, steps):
    """Each row updated in place by its own iteration, over several steps."""
    for i in prange(x.shape[0]):
        for _ in range(steps):
            for j in range(x.shape[1]):
                x[i, j] = x[i, j] - c * math.sin(x[i, j])


@njit
def checked_sqrt(v):
    if v < 0.0:
        raise ValueError("negative input")
    return math.sqrt(v)


@njit(parallel=True)
def checked_roots(x, y):
    """A helper that raises inside the body."""
    for i in prange(x.shape[0]):
        y[i] = checked_sqrt(x[i]) * x[i]


@njit(parallel=True)
def scatter_add(x, idx, out):
    """A scatter-add (`+=` into a shared location passes the shadow through: no atomics)."""
    for i in prange(x.shape[0]):
        out[idx[i]] += x[i] * x[i]


@njit(parallel=True)
def pull_column(state, idx):
    """Column 0 of each row from column 1 of another row: the array is written and its shadow
    updated by several iterations (atomic adds)."""
    for i in prange(state.shape[0]):
        state[i, 0] = math.sin(state[idx[i], 1])


@njit(parallel=True)
def rotate_rows(x, theta):
    """Each row rotated in place by its own angle: iteration i reads and writes row i only."""
    for i in prange(x.shape[0]):
        c, s = math.cos(theta[i]), math.sin(theta[i])
        a, b = x[i, 0], x[i, 1]
        x[i, 0] = c * a - s * b
        x[i, 1] = s * a + c * b


@njit(parallel=True)
def interleave(x, m, y):
    """y[i * m] and y[i * m + 1] from x[i], with a stride m the kernel is given (a 1-D array:
    nothing says the pairs of two iterations are apart)."""
    for i in prange(x.shape[0]):
        y[i * m] = math.sin(x[i])
        y[i * m + 1] = x[i] * x[i]


@njit(parallel=True)
def sparse_gather(x, idx, y):
    """A few iterations reading a large array at scattered places."""
    for i in prange(idx.shape[0]):
        y[i] = math.sin(x[idx[i]]) * x[idx[i] // 2]


@njit(parallel=True)
def energy_then_scale(x, y, c):
    """A prange loop followed by differentiated serial code (the loop's reverse must wait)."""
    for i in prange(x.shape[0]):
        y[i] = math.exp(-x[i] * x[i])
    s = 0.0
    for i in range(y.shape[0]):
        s += c * y[i] * y[i]
    return s


@njit(parallel=True)
def prepare_then_map(x, y):
    """Differentiated serial code before a prange loop that ends the kernel."""
    t = np.empty_like(x)
    for i in range(x.shape[0]):
        t[i] = 0.5 * x[i] + x[(i + 1) % x.shape[0]]
    for i in prange(x.shape[0]):
        y[i] = math.tanh(t[i]) * x[i]


@njit(parallel=True)
def grid_map(a, b):
    """A schedule of two dimensions (pndindex)."""
    for i, j in pndindex(a.shape):
        b[i, j] = math.sin(a[i, j]) * a[i, j]


@njit(parallel=True)
def shifted_range(x, y):
    """A prange starting below 0."""
    n = x.shape[0]
    for i in prange(-2, n - 2):
        y[i + 2] = 0.5 * x[i + 2] * x[i + 2] + x[(i + 3) % n]


@njit(parallel=True)
def two_stages(x, y):
    """Two prange loops, the second reading what the first wrote (split, then fused)."""
    t = np.empty_like(x)
    for i in prange(x.shape[0]):
        t[i] = math.sin(x[i])
    for i in prange(x.shape[0]):
        y[i] = t[i] * t[(i + 1) % x.shape[0]] + x[i]
