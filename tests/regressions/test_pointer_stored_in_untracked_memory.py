"""Fixed: reverse mode gave np.array_split, np.hsplit, np.dsplit, np.broadcast_arrays and the
np.polynomial functions a zero gradient (a silent wrong derivative), found by the NumPy coverage
table (python -m tools.numpy_coverage).

Root cause: those functions keep their arrays in a Numba list, whose payload comes from an
allocator that ir_passes does not know (NRT_MemInfo_new_varsize_dtor). A pointer into the
differentiable argument stored there, then loaded back, had no shadow, so the loads through it
were constant. Reverse mode now refuses a pointer into differentiable memory stored into memory
that has no shadow (analysis/activity.check_pointer_stores), as forward mode already did.
"""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, Forward, UnsupportedError, autodiff


@njit
def middle_piece(x):
    p = np.array_split(x, 3)
    return p[1][0] * 2.0 + p[1][1]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_refused_not_zero(mode):
    x = np.linspace(0.1, 1.0, 6)
    kw = {"mode": Forward} if mode == "forward" else {"seed": 1.0}
    with pytest.raises(UnsupportedError):
        autodiff(middle_piece, Duplicated(x, np.ones(6)), **kw)
