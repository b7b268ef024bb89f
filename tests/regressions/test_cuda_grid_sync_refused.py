"""A numba-cuda kernel with grid-wide synchronisation (`cuda.cg.this_grid().sync()`) built in
both modes without a word: the reverse sweep had no grid barrier mirroring it, ptxas then
rejected the PTX (`cudaCGGetIntrinsicHandle` unresolved) and the GPU-free harness crashed. It is
now refused before anything is built, naming the Python line of the sync (the CUDA bridge
registers `cudaCGSynchronize` as always refused)."""
import importlib.util

import numpy as np
import pytest

from enzyme_py import Duplicated, Forward, compile_gradient
from ir_passes import UnsupportedError

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None,
                                reason="needs numba-cuda (the cuda extra)")


def _kernel():
    from numba import cuda

    @cuda.jit
    def shift_squares(x, y):
        i = cuda.grid(1)
        g = cuda.cg.this_grid()
        if i < x.size:
            y[i] = x[i] * x[i]
        g.sync()                                   # SYNC LINE
        if i < x.size:
            x[i] = y[(i + 1) % x.size]
    return shift_squares


@pytest.mark.parametrize("mode", [None, Forward])
def test_grid_sync_is_refused_at_its_line(mode):
    k = _kernel()
    x = np.linspace(0.1, 1.0, 8)
    kw = {} if mode is None else {"mode": mode}
    with pytest.raises(UnsupportedError, match="grid-wide synchronisation") as err:
        compile_gradient(k[1, 8], Duplicated(x, np.zeros(8)),
                         Duplicated(np.zeros(8), np.ones(8)), **kw)
    with open(__file__) as f:
        line = next(n for n, text in enumerate(f, 1) if "# SYNC LINE" in text)
    assert err.value.location is not None and err.value.location[1] == line, err.value
