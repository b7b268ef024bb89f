"""Found while giving Numba lists shadows (tests/test_numpy_lists.py): np.broadcast_arrays and the
np.polynomial functions were refused ("pointer %arg.x.0 has no shadow", "a pointer mixes
differentiable and constant memory") once their lists had shadows.

Root cause: LLVM sinks the releases of several meminfos into one NRT_decref of a phi: a phi of
two parameters' meminfos stored into the list (forward mode), of a parameter's meminfo or a
list handle with an item's meminfo loaded from the shadowed list (both modes). The phi got a
shadow, and its other operands had none. A handle, and a parameter the function never reads
through, are now their own shadow there (forward mode: a handle's shadow handles), and a merge
of parameters without shadows needs none (analysis/forward_activity.soft_require).
"""
import numpy as np
import pytest
from numba import njit

from fd_modes import check_forward, check_reverse


@njit
def pair_product(x, A):
    a, c = np.broadcast_arrays(x, A[:1, :1])
    return np.sum(a * c * np.arange(1.0, 1.0 + a.size))


@njit
def poly_sum(c, d):
    return np.sum(np.polynomial.polynomial.polyadd(c, d) * np.array([1.0, 2.0, 3.0]))


@njit
def chunk_sum(x):
    s = 0.0
    for c in np.split(x, 3):
        s += np.sum(c * c)
    return s


@pytest.mark.parametrize("check", [check_reverse, check_forward])
def test_meminfo_merges(check):
    r = np.random.default_rng(3)
    check(pair_product, r.uniform(0.2, 1.0, 4), r.uniform(0.2, 1.0, (3, 3)))
    check(poly_sum, r.uniform(0.2, 1.0, 3), r.uniform(0.2, 1.0, 2))
    check(chunk_sum, r.uniform(0.2, 1.0, 6))
