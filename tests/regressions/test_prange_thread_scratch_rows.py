"""A prange body that writes, then reads, its thread's row of a scratch matrix
(`scratch[numba.get_thread_id(), j]`) differentiates. Before: refused as a parallel reduction
("memory indexed by the thread is written other than as `s += ...`"): every float access at an
address computed from the thread id was taken for a reduction's partial result."""
import numba
import numpy as np
from numba import njit, prange

from enzyme_py import Duplicated, autodiff


@njit(parallel=True)
def centre_cubes(x, out):
    n, m = x.shape
    scratch = np.empty((numba.get_num_threads(), m))
    for i in prange(n):
        t = numba.get_thread_id()
        for j in range(m):
            scratch[t, j] = x[i, j] ** 3
        s = 0.0
        for j in range(m):
            s += scratch[t, j]
        for j in range(m):
            out[i, j] = scratch[t, j] - s / m


def test_thread_scratch_rows_differentiate():
    rng = np.random.default_rng(1)
    x, seed = rng.standard_normal((9, 4)), rng.standard_normal((9, 4))
    dx = np.zeros_like(x)
    autodiff(centre_cubes, Duplicated(x, dx), Duplicated(np.zeros_like(x), seed.copy()))
    want = 3 * x ** 2 * (seed - seed.mean(axis=1, keepdims=True))
    np.testing.assert_allclose(dx, want, rtol=1e-12, atol=1e-12)
