"""check_gradient(..., fd_dtype=np.float64) computed the finite differences of complex64
arrays in complex64 with float64's step (only float arrays were upcast): a correct gradient
failed by about 1e-1."""
import numba
import numpy as np

from enzyme_py import Duplicated, check_gradient


@numba.njit
def squares(z):
    s = 0.0
    for i in range(z.size):
        s += (z[i] * z[i]).real + abs(z[i]) ** 2
    return s


def test_complex64_with_fd_dtype_float64():
    rng = np.random.default_rng(1)
    z = (rng.normal(size=6) + 1j * rng.normal(size=6)).astype(np.complex64)
    report = check_gradient(squares, Duplicated(z, np.zeros_like(z)), fd_dtype=np.float64)
    assert report.passed, str(report)
