"""Kernels and worker functions for tests/test_scale_out.py (importable by spawned workers)."""
import time

import numpy as np
from numba import njit

import enzyme_py
from enzyme_py import Const, Duplicated, autodiff


@njit
def damped_energy(x, k):
    e = 0.0
    for i in range(x.shape[0] - 1):
        d = x[i + 1] - x[i]
        e += 0.5 * k * d * d + np.exp(-x[i] * x[i])
    return e


def first_gradient(cache_dir, x):
    """Runs in a worker: the plain kernel (warms Numba), then the first gradient call, timed."""
    enzyme_py.set_cache_dir(cache_dir)
    damped_energy(x, 2.0)
    builds, hits = enzyme_py.compile_count(), enzyme_py.disk_cache.stats["hits"]
    dx = np.zeros_like(x)
    t0 = time.perf_counter()
    autodiff(damped_energy, Duplicated(x, dx), Const(2.0))
    return {"seconds": time.perf_counter() - t0, "dx": dx,
            "builds": enzyme_py.compile_count() - builds,
            "hits": enzyme_py.disk_cache.stats["hits"] - hits}


def first_wrapped_gradient(cache_dir, x, wrapped):
    """Runs in a worker: `wrapped` (a pickled value_and_grad or differentiable) computes its
    first gradient; returns it with the builds and disk-cache hits it caused."""
    enzyme_py.set_cache_dir(cache_dir)
    damped_energy(x, 2.0)
    builds, hits = enzyme_py.compile_count(), enzyme_py.disk_cache.stats["hits"]
    if isinstance(wrapped, enzyme_py.differentiable):
        value, grad = wrapped.value_and_grad(x, 2.0)
    else:
        value, grad = wrapped(x, 2.0)
    return {"value": value, "dx": grad, "builds": enzyme_py.compile_count() - builds,
            "hits": enzyme_py.disk_cache.stats["hits"] - hits}
