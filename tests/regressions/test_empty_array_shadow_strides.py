"""Fixed (found by tests/test_fast_path_agreement.py): `Duplicated(x[:0], np.zeros_like(x[:0]))`
raised "the shadow's strides (0,) differs from the array's (8,)": an empty array's strides are
arbitrary (NumPy calls it C and F contiguous either way), so they are no longer compared."""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, autodiff


@njit
def total(x):
    s = 1.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def test_empty_slice_with_zeros_like_shadow():
    x = np.arange(4.0)[:0]
    dx = np.zeros_like(x)
    assert x.strides != dx.strides
    for _ in range(2):
        assert autodiff(total, Duplicated(x, dx)) == (None,)
    assert dx.shape == (0,)
