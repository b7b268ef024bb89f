"""Fixed twice: reverse mode gave np.array_split, np.hsplit, np.dsplit, np.broadcast_arrays and
the np.polynomial functions a zero gradient (a silent wrong derivative), found by the NumPy
coverage table (python -m tools.numpy_coverage).

Root cause: those functions keep their arrays in a Numba list, whose payload came from an
allocator that ir_passes did not know (NRT_MemInfo_new_varsize_dtor). A pointer into the
differentiable argument stored there, then loaded back, had no shadow, so the loads through it
were constant. First fix: reverse mode refuses a pointer into differentiable memory stored into
memory that has no shadow (analysis/activity.check_pointer_stores), as forward mode does. Second:
the list allocator is registered (enzyme_py/bridge/nrt.py), so the list has a shadow holding the
shadows of its arrays, and both modes differentiate it (tests/test_numpy_lists.py).
"""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, Forward, autodiff


@njit
def middle_piece(x):
    p = np.array_split(x, 3)
    return p[1][0] * 2.0 + p[1][1]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_derivative_not_zero(mode):
    x = np.linspace(0.1, 1.0, 6)
    expected = np.array([0.0, 0.0, 2.0, 1.0, 0.0, 0.0])
    if mode == "forward":
        for k in range(6):
            e = np.eye(6)[k]
            assert autodiff(middle_piece, Duplicated(x, e.copy()), mode=Forward) == expected[k]
    else:
        dx = np.zeros(6)
        autodiff(middle_piece, Duplicated(x, dx), seed=1.0)
        np.testing.assert_array_equal(dx, expected)
