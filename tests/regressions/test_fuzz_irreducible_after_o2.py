"""Fixed: a kernel whose control flow LLVM's O2 made irreducible crashed with IrreducibleError.

Found by campaign seed 2031 (kernel 2031000444), the first such kernel in 23,000. Root cause:
`while k0 < 2 and np.sum(x0) < 0.25:` around nested loops; O2 (not O1; jump threading is the
likely pass) turned the loop into a cycle with two entries, which has no natural loop to reverse (the IR Numba emits is
reducible, and so is O1's result). cleanup (enzyme_py/bridge/cleanup.py) now checks the O2 result and
cleans with O1 instead when it is irreducible; IrreducibleError is an UnsupportedError for any
module that stays irreducible.
"""
import math

import numpy as np
from numba import njit

from enzyme_py import Duplicated, check_gradient, inspect
from tools.fuzz import prims
from ir_passes import UnsupportedError
from ir_passes.analysis.loops import IrreducibleError

REASON = "O2 made a while-and loop irreducible"


@njit
def kern(x0):
    x0[0] *= (0.9 + (0.1 * math.tanh(math.sqrt(math.hypot((np.max(x0) / (1.0 + (x0[0] * x0[0]))), 0.5)))))
    x0[0] += (((x0[1] ** 2) * (x0[0] ** (-1))) if (np.tanh(x0[(-1)]) * (x0[1] + x0[(-1)])) > x0[(-2)] else ((x0[1] + 0.1) * (x0[1] / (1.0 + abs(x0[1])))))
    k0 = 0
    while k0 < 2 and np.sum(x0) < 0.25:
        for i0 in range(2):
            for i1 in range(2):
                x0[i1] = ((0.9 + math.sin(x0[i1])) * (0.9 + (0.1 * math.tanh(x0[((i1 + 1) % 2)]))))
        x0[k0] *= math.cos(math.expm1(((x0[k0] % 2.5) * 0.5)))
        k0 += 1
    v0 = math.tan((np.log((1.0 + abs(x0[1]))) + 0.25))
    for i2 in range(x0.shape[0]):
        x0[((i2 + 2) % 2)] += v0
        x0[(i2 - 2)] = ((prims.minnum(np.float64((float(i2) * 0.25)), np.float64(x0[i2])) * (float(round((x0[i2] * 2.0))) * v0)) % (0.5 + (((x0[1] * v0) / (1.0 + ((x0[1] * (float(i2) * 0.5)) * (x0[1] * (float(i2) * 0.5))))) * ((x0[1] * v0) / (1.0 + ((x0[1] * (float(i2) * 0.5)) * (x0[1] * (float(i2) * 0.5))))))))
        for i3 in range(3):
            for i4 in range((x0.shape[0] - 1), (-1), -1):
                x0[i4] += (x0[i2] - (0.5 * x0[i4]))
    return (-math.tanh(x0[1]))



def test_fuzz_seed_2031000444():
    x0 = np.array([0.01, 0.02, -0.03, 0.04, 0.02, 0.01])     # sum < 0.25: the while loop runs
    g = inspect(kern, Duplicated(x0.copy(), np.zeros(6)))
    assert g.error is None, g.error
    rep = check_gradient(kern, Duplicated(x0, np.zeros(6)))
    assert rep.passed, str(rep)


def test_irreducible_is_unsupported():
    assert issubclass(IrreducibleError, UnsupportedError)
