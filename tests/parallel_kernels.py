"""`@njit(parallel=True)` kernels with `prange`, written as scientific code writes them
(tests/test_parallel.py differentiates each against finite differences and against the
gradient of its serial copy, `njit(kernel.py_func)`)."""
import math

from numba import njit, prange


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
