"""Fixed: the reverse sweep skipped a fused loop by jumping to the reverse of the block that
enters it; when that block was the latch of another fused loop, control went into that loop's
per-iteration reverse and back into the forward sweep: the gradient never returned.

Found by the fuzz slice of the suite (tests/test_fuzz.py, seed 11000172) the day fused loops
(ir_passes/transforms/reverse/loops/fusion.py) landed. Root cause: ReverseSweep.edge went to rb[entry] instead
of reversing the entry edge itself, which skips the earlier fused loop in turn.
"""
import math

import numpy as np
from numba import njit

from enzyme_py import Active, Duplicated, check_gradient, inspect

REASON = "two fused loops back to back: the reverse sweep re-entered the first one's iteration"


@njit
def kern(a1, p0, a0, x0):
    for i0 in range(6):
        a1 -= (x0[i0] * x0[4])
    for i1 in range(6):
        a1 *= (0.5 * math.sin(np.fmod(a1, 2.5)))
    x0[(-1)] *= x0[5]
    for i2 in range(p0.shape[0]):
        k0 = 0
        while k0 < 5 and a1 >= 0.9:
            x0[i2] = (-0.75)
            k0 += 1


@njit
def active_then_inactive(x, y, c):
    for i in range(x.shape[0]):
        y[i] = np.sin(x[i])
    for i in range(c.shape[0]):
        c[i] = 2.0 * c[i]


def test_fuzz_seed_11000172_returns():
    x0 = np.linspace(0.1, 0.9, 7)
    g = inspect(kern, Active(1.3), np.arange(7), Active(0.7), x0.copy())
    assert g.generated.count("resume.") >= 2      # two fused loops, one after the other
    rep = check_gradient(kern, Active(1.3), np.arange(7), Active(0.7), x0)
    assert rep.passed, str(rep)


def test_active_loop_then_inactive_loop():
    rng = np.random.default_rng(0)
    rep = check_gradient(active_then_inactive, Duplicated(rng.standard_normal(6), np.zeros(6)),
                         Duplicated(np.zeros(6), rng.standard_normal(6)), rng.standard_normal(4))
    assert rep.passed, str(rep)
