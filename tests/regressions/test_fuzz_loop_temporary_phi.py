"""Fixed: `np.empty` inside a loop whose data pointer LLVM reads through a phi of two
allocations raised "active data is stored into memory that has no shadow".

Found by the fuzz campaigns (seeds 2027002362, 2027003313, 2027005020, 2027006104, 2027008901,
2029002397: 6 in 13,000 kernels). Root cause: LLVM's loop rotation allocates the temporary in
the preheader and again in the latch and merges the two meminfos with a phi; allocation_size
(ir_passes/rules/effects.py) only recognized a data pointer taken from an allocator call
itself, so the temporary got no shadow. It now takes the common size of the merged allocations.
"""
import math

import numpy as np
from numba import njit

from enzyme_py import Duplicated, check_gradient, inspect

REASON = "a temporary allocated in a rotated loop: its meminfo is a phi of two allocations"


@njit
def kern(A0):
    # fuzz seed 2029002397, without the statements that do not touch the temporary
    for i0 in range(2):
        t0 = np.empty(3, np.float64)
        for q0 in range(3):
            t0[q0] = (A0[1, i0] * 1.0) ** 5
        if ((1.0 + abs(t0[2])) ** (A0[1 - i0, i0] * 0.5)) + (t0[i0] + A0[i0, i0]) <= 0.3:
            pass
        elif t0[i0] <= (A0[0, i0] if math.fabs(A0[0, 4 - i0]) < (t0[i0 - 2] + A0[i0, i0]) else 1.0):
            break
    A0[1, 0] *= math.cos(A0[0, 0])


def test_fuzz_seed_2029002397():
    A0 = np.array([[0.3, 0.5, 0.7, 0.2, 0.9], [0.4, 0.6, 0.8, 0.1, 0.5]])
    g = inspect(kern, Duplicated(A0.copy(), np.zeros_like(A0)))
    assert g.error is None, g.error
    rep = check_gradient(kern, Duplicated(A0, np.zeros_like(A0)))
    assert rep.passed, str(rep)
