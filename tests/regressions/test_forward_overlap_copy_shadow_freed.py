"""Found reviewing forward mode's frees: `x[1:] = x[:-1]` (and any setitem whose source may
overlap its destination, as in `b[:] = np.linalg.solve(A, b)`) makes Numba copy the source into
a buffer it allocates only when the two overlap at run time, read the source through a phi of
the parameter's data and that buffer, and free the phi under the same condition. Forward mode
released a shadow only for a pointer that could not be a parameter's, so the shadow of the copy
leaked on every call that overlapped (NRT: one allocation more than frees per call). Fixed in
forward/allocations.py::mirror_release: the shadow is released unless the pointer freed is the
parameter itself.
"""
import numpy as np
import pytest
from numba import njit

from enzyme_py import BatchDuplicated, Duplicated, Forward, autodiff
from fd_modes import check_forward, check_modes
from nrt_stats import unfreed


@njit
def shift(x):
    x[1:] = x[:-1]                   # overlaps: Numba copies the source first
    return np.sum(x * x * x)


@njit
def solve_into(A, b):
    b[:] = np.linalg.solve(A, b)     # the same copy path, not taken at run time
    return np.sum(b * b)



def _x():
    return np.random.default_rng(3).uniform(-1, 1, 6)


def _solve_operands():
    r = np.random.default_rng(4)
    return np.eye(3) * 3 + r.uniform(-1, 1, (3, 3)), r.uniform(-1, 1, 3)


def test_shift_against_finite_differences():
    check_forward(shift, _x())


@pytest.mark.parametrize("width", [1, 2])
def test_shift_frees_the_shadow_of_its_copy(width):
    x = _x()
    if width == 1:
        call = lambda: autodiff(shift, Duplicated(x.copy(), np.ones_like(x)), mode=Forward)  # noqa: E731
    else:
        lanes = (np.ones_like(x), np.arange(6.0))
        call = lambda: autodiff(shift, BatchDuplicated(x.copy(), lanes), mode=Forward)  # noqa: E731
    assert unfreed(call) == (0, 0)


def test_solve_into_its_right_hand_side():
    check_modes(solve_into, *_solve_operands())
    A, b = _solve_operands()
    assert unfreed(lambda: autodiff(solve_into, Duplicated(A.copy(), np.ones_like(A)),
                                    Duplicated(b.copy(), np.ones_like(b)), mode=Forward)) == (0, 0)
