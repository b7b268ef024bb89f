"""`numba.np.ufunc.parallel._get_thread_id()` in a prange body is a thread id: Numba calls it as
a ctypes function (an i32 call through a pointer loaded from `numba.dynamic.globals.<address>`).
Before: the call was opaque, so memory indexed by it was not seen as the thread's: a row read
before the iteration wrote it (a value carried between iterations on one thread) was
differentiated without a word, instead of refused as `numba.get_thread_id()`'s is."""
import numba
import numpy as np
import pytest
from numba import njit, prange

from enzyme_py import Duplicated, UnsupportedError, autodiff


@njit(parallel=True)
def carried(x, out):
    scratch = np.zeros((numba.get_num_threads(), 1))
    for i in prange(x.shape[0]):
        t = numba.np.ufunc.parallel._get_thread_id()
        out[i] = scratch[t, 0] * x[i]
        scratch[t, 0] = x[i]


def test_ctypes_thread_id_is_the_thread_id():
    x = np.linspace(0.1, 1.0, 8)
    with pytest.raises(UnsupportedError, match="read before the iteration wrote it"):
        autodiff(carried, Duplicated(x, np.zeros(8)), Duplicated(np.zeros(8), np.ones(8)))
