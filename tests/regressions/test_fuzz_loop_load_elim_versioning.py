"""Fixed: compiling a valid gradient failed with "Instruction does not dominate all uses!".

Found by the fuzz campaign of seed 2038 (seed 2038001212), present in the earliest code.
Root cause: an LLVM bug. The gradient that ir_passes generated passed the verifier. LLVM's O3
then broke it, in LoopLoadElimination (found with -opt-bisect-limit): the forward loop stores
x1[(i + 1) % 4] and loads x1[i] in the next iteration, and LLE versioned the loop under SCEV
predicates, leaving a phi of the frame that does not dominate its use. enzyme_py/bridge/link.py now
sets -loop-load-elimination-scev-check-threshold=0, so LLE forwards stores only where it needs
no such versioning.
"""
import math

import numpy as np
from numba import njit

from enzyme_py import Const, Duplicated, autodiff, check_gradient


@njit
def kern(x0, x1):
    for i1 in range(x0.shape[0]):
        x1[((i1 + 1) % 4)] = math.sin(x1[i1])


def test_fuzz_seed_2038001212():
    x0 = np.full(4, 0.5)
    rep = check_gradient(kern, Const(x0), Duplicated(np.full(4, 0.5), np.ones(4)))
    assert rep.passed, str(rep)


def test_only_the_first_element_reaches_the_end():
    # x1[1..3] are overwritten before they are read; x1[0]'s chain is sin applied four times
    x1, dx1 = np.full(4, 0.5), np.ones(4)
    autodiff(kern, Const(np.full(4, 0.5)), Duplicated(x1, dx1))
    v = 0.5
    chain = []
    for _ in range(4):
        chain.append(math.cos(v))
        v = math.sin(v)
    # L = x1[1] + x1[2] + x1[3] + x1[0] (final): each is a prefix of the chain of sines
    expect = sum(np.prod(chain[:k]) for k in range(1, 5))
    assert abs(dx1[0] - expect) < 1e-12 and np.all(dx1[1:] == 0.0)
