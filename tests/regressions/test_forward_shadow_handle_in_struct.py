"""Found by the batched forward tests of np.linalg.solve with one right-hand side: lane 0's
tangent was 0 (width 2 and 3), the single-direction call right only by luck.

Numba's `solve(A, b)` copies b into an array it allocates, then reshapes that array through a
struct on the stack that holds its meminfo (the allocation handle). Forward mode stored the
primal handle into the shadow struct, so the reference counts taken through the struct's
loaded copies skipped the shadow handle, which was released while its data was still read: a
use after free (fixed: forward/memory.py stores the shadow handles, as it stores shadow pointers).
"""
import numpy as np
import pytest
from numba import njit

from enzyme_py import BatchDuplicated, Forward, autodiff
from fd_modes import check_batched_forward, check_forward
from nrt_stats import unfreed


@njit
def solve_vector(A, b):
    return np.sum(np.linalg.solve(A, b) ** 2)


def _operands():
    r = np.random.default_rng(4)
    return np.eye(3) * 3 + r.uniform(-1, 1, (3, 3)), r.uniform(-1, 1, 3)


@pytest.mark.parametrize("width", [1, 2, 3])
def test_every_lane_against_finite_differences(width):
    if width == 1:
        check_forward(solve_vector, *_operands())
    else:
        check_batched_forward(solve_vector, *_operands(), width=width)


def test_shadow_allocations_released_once():
    A, b = _operands()
    lanes = [(np.ones_like(A), np.zeros_like(A)), (np.zeros_like(b), np.ones_like(b))]
    call = lambda: autodiff(solve_vector, BatchDuplicated(A, lanes[0]),     # noqa: E731
                            BatchDuplicated(b, lanes[1]), mode=Forward)
    assert unfreed(call, 50) == (0, 0)
