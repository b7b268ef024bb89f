"""Fixed: forward mode gave np.nanpercentile a zero tangent, and a flatten followed by two masked
copies a tangent equal to a primal value (silent wrong derivatives), found by the NumPy coverage
table (python -m tools.numpy_coverage).

Root cause: an array's allocation handle stored into a struct on the stack was stored as itself
into the shadow struct, so a reference taken through the struct (NRT_incref of the loaded
handle) was not repeated on the shadow handle, while the later release of the allocation was:
the shadow allocation was freed early and its memory reused by the next shadow. A handle with a
shadow handle now stores its shadow handle into shadow memory (transforms/forward/memory.store).
"""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, Forward, autodiff


@njit
def masked_twice(x):
    t = x.flatten()
    mask = np.isnan(t)
    a = t[~mask]    # noqa: F841 - an unused masked copy, as np.nanpercentile makes one
    t = t[~mask]
    return t[2]


@njit
def nan_percentile(x):
    return np.nanpercentile(x, 30.0)


def test_masked_copies():
    x = np.linspace(0.1, 1.0, 6)
    for i in range(6):
        d = np.zeros(6)
        d[i] = 1.0
        assert autodiff(masked_twice, Duplicated(x.copy(), d), mode=Forward) == (1.0 if i == 2 else 0.0)


def test_nanpercentile_tangent():
    x = np.array([0.7, 0.15, 0.43, 0.29, 0.85, 0.57])    # sorted: .15 .29 .43 .57 .7 .85
    d = np.arange(1.0, 7.0)
    t = autodiff(nan_percentile, Duplicated(x.copy(), d.copy()), mode=Forward)
    # 30th percentile of 6 values: rank 2.5 -> halfway between the 2nd and 3rd smallest
    assert abs(t - 0.5 * (d[3] + d[2])) < 1e-12
