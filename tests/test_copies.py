"""Memory a kernel allocates and fills by copying differentiable data (`x.copy()`, `np.copy`,
slicing copies, `np.diff`'s output, an array struct kept on the stack) gets a shadow, in reverse
and forward mode; `math.gamma`. Each kernel against finite differences (fd_modes.py)."""
import math

import numpy as np
import pytest
from numba import njit

from fd_modes import check_modes, with_single


@njit
def copy_then_square(x):
    y = x.copy()
    for i in range(y.shape[0]):
        y[i] = y[i] * y[i]
    return y.sum() + y[0] * x[1]


@njit
def np_copy_update(x):
    y = np.copy(x)
    y[0] += 1.0
    y *= x
    return np.sum(np.sin(y))


@njit
def empty_like_fill(x):
    y = np.empty_like(x)
    y[:] = x
    for i in range(1, y.shape[0]):
        y[i] += y[i - 1]
    return np.sum(y * y)


@njit
def slice_copy(x):
    y = x[1:4].copy()
    y[1] = y[0] * y[2]
    return np.sum(y ** 2)


@njit
def strided_copy_2d(a):
    b = a[::2, 1:].copy()
    return np.sum(np.exp(b) * b)


@njit
def diff_energy(x):
    return np.sum(np.diff(x) ** 2)


@njit
def diff_2d(a):
    d = np.diff(a)
    return np.sum(d * d * d)


@njit
def copy_into_output(x, out):
    y = x.copy()
    y[::-1] = x
    out[:] = y * 2.0


@njit
def gamma_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.gamma(x[i]) * x[i]
    return s


def _x(n=6, dtype=np.float64):
    return np.linspace(0.6, 2.1, n).astype(dtype)


CASES = [
    (copy_then_square, lambda dt: [_x(dtype=dt)]),
    (np_copy_update, lambda dt: [_x(dtype=dt)]),
    (empty_like_fill, lambda dt: [_x(dtype=dt)]),
    (slice_copy, lambda dt: [_x(dtype=dt)]),
    (strided_copy_2d, lambda dt: [np.linspace(-1, 1, 20).reshape(5, 4).astype(dt)]),
    (diff_energy, lambda dt: [np.cos(_x(7, dt))]),
    (diff_2d, lambda dt: [np.asfortranarray(np.sin(np.arange(12.0)).reshape(3, 4)).astype(dt)]),
    (copy_into_output, lambda dt: [_x(dtype=dt), np.zeros(6, dt)]),
    (gamma_sum, lambda dt: [_x(dtype=dt)]),
]


# float32 for one contiguous copy (a byte count of 4-byte items), one strided copy and
# math.gamma (its own single-precision function); the other copies' float32 code differs from
# their float64 code only in the width of the same operations
SINGLE = {copy_then_square, strided_copy_2d, gamma_sum}


@pytest.mark.parametrize("kernel,make,dtype", with_single(CASES, SINGLE))
def test_copy_kernels(kernel, make, dtype):
    check_modes(kernel, *make(dtype))
