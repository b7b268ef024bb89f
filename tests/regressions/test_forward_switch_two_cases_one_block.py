"""Both modes dropped a phi's second entry from a switch with two cases to one block.

`if n == 4 or n == 1:` becomes, after LLVM's cleanup, `switch n [4 -> join, 1 -> join]`: two
edges into `join`, so its phis carry two entries from the switch's block. Forward mode kept
one per source block, and the module failed LLVM's verifier ("PHINode should have one entry for
each predecessor"): an InternalError in GradBench's hand-tracking eval (Numba's shape check
before a matrix product). Reverse mode's phi recording which predecessor control came from had
the same fault. Both now keep one entry per edge (transforms/forward/state.py fill_phis,
transforms/reverse/sweeps/forward_sweep.py clone_phi; tests/filecheck/forward-mode/
switch-duplicate-cases.ll).
"""
import numpy as np
from numba import njit

from enzyme_py import Const, Duplicated, Forward, autodiff, check_gradient


@njit
def branchy(x, n, out):
    for i in range(x.shape[0]):
        if n == 4 or n == 1:
            v = x[i] * x[i]
        else:
            v = 2.0 * x[i]
        out[i] = v * (i + 1.0)


def test_forward_and_reverse_through_a_two_case_switch():
    x = np.array([0.5, -1.5, 2.0])
    for n, slope in ((4, 2 * x), (1, 2 * x), (7, 2.0 + 0 * x)):
        t = np.zeros(3)
        autodiff(branchy, Duplicated(x.copy(), np.ones(3)), Const(n),
                 Duplicated(np.zeros(3), t), mode=Forward)
        np.testing.assert_allclose(t, slope * np.arange(1.0, 4.0), rtol=1e-14)
        assert check_gradient(branchy, Duplicated(x.copy(), np.zeros(3)), Const(n),
                              Duplicated(np.zeros(3), np.ones(3))).passed
