"""Fixed: forward mode raised "internal: a varying value has no tangent" on an fptrunc.

Found by the fuzz campaign of seed 2034 (seed 2034001399, the first forward-mode refusal with a
recorded seed). Root cause: a value computed from differentiable memory through `round` has a
zero tangent; the arithmetic rules record that zero, but the fpext/fptrunc handler
(forward_instructions.float_cast) returned without recording anything, so the store that used
the cast found a varying value with no tangent. It now records the zero tangent.
"""
import math

import numpy as np
from numba import njit

from enzyme_py import Duplicated, Forward, autodiff, check_gradient


@njit
def kern(a1, A0, x0):
    x0[2] = math.log(2.0 + math.cos(np.round(np.float64(A0[2, 1] * 2.0)) * (a1 * a1)))
    return x0[1] * x0[1]


def _args():
    A0 = np.linspace(0.1, 1.2, 12).reshape(4, 3).astype(np.float32)
    x0 = np.linspace(0.5, 1.0, 6).astype(np.float32)
    return A0, x0


def test_forward_mode_tangent_is_zero_through_round():
    A0, x0 = _args()
    dA, dx = np.ones_like(A0), np.ones_like(x0)
    t = autodiff(kern, 0.5, Duplicated(A0, dA), Duplicated(x0, dx), mode=Forward)
    assert dx[2] == 0.0                           # round's derivative is zero
    assert abs(t - 2.0 * x0[1]) < 1e-6            # d(x1^2) along dx1 = 1


def test_reverse_mode_still_right():
    A0, x0 = _args()
    rep = check_gradient(kern, 0.5, Duplicated(A0, np.zeros_like(A0)),
                         Duplicated(x0, np.zeros_like(x0)))
    assert rep.passed, str(rep)
