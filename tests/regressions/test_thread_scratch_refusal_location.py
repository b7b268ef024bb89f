"""A refused access to memory indexed by the thread in a prange body (a per-thread scratch row
chosen with get_thread_id(), read before the iteration writes it) names the Python line.
Before: no location at all, only an LLVM `store double`: the parallel body's lines ("<string>") lay after every located line of
the kernel's own file (the prange was its last statement), so none was attributed to it."""
import inspect

import numba
import numpy as np
import pytest
from numba import njit, prange

from enzyme_py import Duplicated, UnsupportedError, autodiff


@njit(parallel=True)
def demean(x, out):
    scratch = np.ones((numba.get_num_threads(), x.shape[1]))
    for i in prange(x.shape[0]):
        t = numba.get_thread_id()
        for j in range(x.shape[1]):
            scratch[t, j] = 2.0 * x[i, j] * scratch[t, j]      # the refused line
        m = 0.0
        for j in range(x.shape[1]):
            m += scratch[t, j]
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] - m / x.shape[1]


def _line(fn, text):
    lines, start = inspect.getsourcelines(fn.py_func)
    return start + next(k for k, s in enumerate(lines) if text in s)


def test_thread_scratch_read_names_its_line():
    x = np.random.default_rng(0).standard_normal((6, 4))
    with pytest.raises(UnsupportedError) as err:
        autodiff(demean, Duplicated(x, np.zeros_like(x)),
                 Duplicated(np.zeros_like(x), np.ones_like(x)))
    assert "indexed by the thread" in str(err.value)
    assert err.value.location == (__file__, _line(demean, "the refused line"))
    assert f"{__file__}:{_line(demean, 'the refused line')}" in str(err.value)
