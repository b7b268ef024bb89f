"""Fixed: the forward sweep drops lifetime markers (hints only). Fuzzer reproducer (crash:RuntimeError): the gradient fails LLVM verification,
"llvm.lifetime.start/end can only be used on alloca or poison".

Found by the differential fuzzer (python -m tools.fuzz --n 10000 --seed 2026: seed
2026000510), shrunk automatically (kern_shrunk), then by hand (kern). It needs np.max (whose
ravel/reshape code keeps three stack allocas with lifetime markers), an overwrite loop before it,
a data-dependent select around a division and an in-place copy loop.

Root-cause guess: the gradient copies np.max's llvm.lifetime.start/end markers along with the
stack allocas they mark, and after Numba's O3 the marked pointer is no longer an alloca (a
phi/select of the forward-sweep and reverse-sweep copies), which LLVM's verifier now rejects:
lifetime markers should be dropped (or kept on allocas only) in the generated function.
"""
import math

import numpy as np
from numba import njit

from enzyme_py import Duplicated, check_gradient

REASON = ("llvm.lifetime.start/end of np.max's stack allocas survive into the gradient on "
          "pointers that are no longer allocas after O3; LLVM's verifier rejects them")


@njit
def kern(x1, x0):
    for i1 in range(2):
        x1[0] = math.atan(x1[0])
    x0[0] += ((0.5 / x1[0]) if x1[0] > 0.1 else 0.5)
    for i3 in range(1):
        x0[0] = x0[(i3 % x0.shape[0])]
    return np.max(x0)


@njit
def kern_shrunk(x1, x0):
    for i1 in range(2):
        x1[0] = math.atan(x1[0])
    x0[0] += ((0.5 / x1[0]) if np.cos(0.5) > 0.5 else 0.5)
    for i3 in range(1):
        x0[0] = x0[(i3 % x0.shape[0])]
    return np.max(x0)


def _args():
    return [Duplicated(np.array([0.5]), np.array([1.0])), Duplicated(np.array([0.5]), np.array([1.0]))]


def test_fuzz_lifetime_marker_not_on_alloca():
    report = check_gradient(kern, *_args(), seed=1.0, rtol=1e-06, eps=1e-06)
    assert report.passed, str(report)


def test_fuzz_lifetime_marker_not_on_alloca_shrunk():
    report = check_gradient(kern_shrunk, *_args(), seed=1.0, rtol=1e-06, eps=1e-06)
    assert report.passed, str(report)
