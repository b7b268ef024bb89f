"""NumPy functions inside kernels that allocate their result or copy their input (np.sort,
np.median, np.cumprod, np.interp, np.outer, np.trace, np.kron, np.convolve, np.cross), each
against finite differences in reverse and forward mode (fd_modes.py), float64, and float32 where
the derivative takes another route."""
import numpy as np
import pytest
from numba import njit

from fd_modes import check_modes, with_single


@njit
def weighted_sort(x, w):
    return np.sum(np.sort(x) * w)


@njit
def median_scaled(x):
    return np.median(x) * x[0]


@njit
def cumprod_sum(x):
    return np.sum(np.cumprod(x))


@njit
def interp_values(xp, fp):
    return np.sum(np.interp(np.linspace(0.1, 0.9, 5), xp, fp) ** 2)


@njit
def outer_then_product(x, y, P):
    P += np.outer(x, y)
    return np.sum((P @ y) ** 2)


@njit
def trace_of_square(A):
    return np.trace(A @ A)


@njit
def kron_norm(A, B):
    return np.sum(np.kron(A, B) ** 2)


@njit
def convolve_energy(x, y):
    return np.sum(np.convolve(x, y) ** 2)


@njit
def cross_energy(x, y):
    return np.sum(np.cross(x, y) ** 2)


def _u(r, shape, dtype):
    return r.uniform(-1, 1, shape).astype(dtype)


CASES = [
    (weighted_sort, lambda r, dt: [r.permutation(np.linspace(0.1, 1.0, 7)).astype(dt), _u(r, 7, dt)]),
    (median_scaled, lambda r, dt: [r.permutation(np.linspace(0.1, 1.0, 7)).astype(dt)]),
    (cumprod_sum, lambda r, dt: [r.uniform(0.5, 1.5, 6).astype(dt)]),
    (interp_values, lambda r, dt: [np.linspace(0.0, 1.0, 6).astype(dt), _u(r, 6, dt)]),
    (outer_then_product, lambda r, dt: [_u(r, 3, dt), _u(r, 4, dt), _u(r, (3, 4), dt)]),
    (trace_of_square, lambda r, dt: [_u(r, (3, 3), dt)]),
    (kron_norm, lambda r, dt: [_u(r, (2, 2), dt), _u(r, (2, 3), dt)]),
    (convolve_energy, lambda r, dt: [_u(r, 5, dt), _u(r, 3, dt)]),
    (cross_energy, lambda r, dt: [_u(r, 3, dt), _u(r, 3, dt)]),
]


# float32 where the derivative takes another route: a comparison sort and the gathers after it,
# a search over float32 abscissae, `@` (BLAS's single-precision routines); the other kernels'
# float32 code differs from their float64 code only in the width of the same operations
SINGLE = {weighted_sort, interp_values, outer_then_product}


@pytest.mark.parametrize("kernel,make,dtype", with_single(CASES, SINGLE))
def test_numpy_functions(kernel, make, dtype):
    check_modes(kernel, *make(np.random.default_rng(0), dtype))
