"""Fixed: forward mode gave a zero tangent for np.linalg.norm of a 2-D array (a silent wrong
derivative), found by the NumPy coverage table (python -m tools.numpy_coverage).

Root cause: Numba's ravel calls numba_attempt_nocopy_reshape(old dims, old strides, ...,
new dims, new strides), an inactive function. Forward mode repeated every inactive call on the
shadows of its pointer arguments (meant for reference counts), so a second call read the
shadow array struct's dims (zero) and wrote the primal's new strides: the 2-norm's BLAS call and
its tangent then ran with a stride of 0. Only frees and functions that write no memory are now
repeated on shadows (transforms/forward/allocations.mirror_release).
"""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, Forward, ForwardWithPrimal, autodiff


@njit
def frobenius(A):
    return np.linalg.norm(A)


@njit
def norm_of_ravel(A):
    return np.linalg.norm(A.ravel())


def test_tangent_and_value_of_a_matrix_norm():
    A = np.random.default_rng(1).uniform(-1.0, 1.0, (3, 4))
    d = np.random.default_rng(2).standard_normal(A.shape)
    exact = np.sum(A * d) / np.linalg.norm(A)
    for kernel in (frobenius, norm_of_ravel):
        t = autodiff(kernel, Duplicated(A.copy(), d.copy()), mode=Forward)
        assert abs(t - exact) < 1e-10, (kernel, t, exact)
        t, value = autodiff(kernel, Duplicated(A.copy(), d.copy()), mode=ForwardWithPrimal)
        assert abs(value - np.linalg.norm(A)) < 1e-12
