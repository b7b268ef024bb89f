"""NumPy functions whose result gathers input values (np.fill_diagonal, np.resize; the set
functions and np.extract, built in a Numba list), differentiated in reverse and forward mode
against finite differences and against their derivatives written out (each output element is one
input element, so the gradient of a weighted sum puts the weights back where they came from)."""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, Forward, autodiff
from fd_modes import check_modes


@njit
def weigh(r):
    f = r.ravel()
    s = 0.0
    for i in range(f.size):
        s += f[i] * (1.0 + 0.5 * i)
    return s


@njit
def diagonal_set(A, z):
    c = A.copy()
    np.fill_diagonal(c, z[0] * z[1])
    return weigh(c)


def _weights(n):
    return 1.0 + 0.5 * np.arange(n)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fill_diagonal_fd(dtype):
    A = np.linspace(0.3, 2.0, 12).reshape(4, 3).astype(dtype)
    z = np.array([1.5, -0.7], dtype=dtype)
    check_modes(diagonal_set, A, z, rtol=1e-4 if dtype == np.float32 else 1e-6)


def test_fill_diagonal_analytic():
    A = np.linspace(0.3, 2.0, 12).reshape(4, 3)
    z = np.array([1.5, -0.7])
    dA, dz = np.zeros_like(A), np.zeros(2)
    autodiff(diagonal_set, Duplicated(A, dA), Duplicated(z, dz), seed=1.0)
    w = _weights(12).reshape(4, 3)
    on = np.zeros((4, 3), dtype=bool)
    on[[0, 1, 2], [0, 1, 2]] = True
    np.testing.assert_allclose(dA, np.where(on, 0.0, w))
    wd = w[on].sum()
    np.testing.assert_allclose(dz, [wd * z[1], wd * z[0]])
    t = autodiff(diagonal_set, Duplicated(A, np.zeros_like(A)), Duplicated(z, np.array([1.0, 0.0])),
                 mode=Forward)
    np.testing.assert_allclose(t, wd * z[1])
