"""Not a gradient bug: the campaign (python -m tools.fuzz --n 10000 --seed 2026, seed
2026009050) reported d x1[0] = 1.0 against a float32 finite difference of 0.9969.

Root cause: the float32 finite-difference reference. x1[0] grows to about 1.4e3 (float32 ulp
1.2e-4) while the step is 2.5e-3, so the central difference carries about 2% of roundoff; the
h-vs-2h agreement test happened to pass. The derivative is exactly 1: every update adds
round(...) * const, and round contributes nothing. Computed on float64 copies, the reference
agrees to 2e-11, so the fuzz checker now re-checks a failing float32 kernel that way and
discards it as `fd_noise_f32` when it passes.
"""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, autodiff, check_gradient
from tools.fuzz import prims

REASON = "float32 finite differences at magnitude 1e3 with a 2.5e-3 step are noise, not the AD"


@njit
def kern(x1):
    k0 = 0
    while k0 < 5:
        x1[0] -= (prims.roundeven(np.float64((x1[(k0 - 2)] + 2.0))) * prims.powi(np.float64((-2.5)), 3))
        k0 += 1


def _args():
    x1 = np.array([0.83, 0.21, 0.53], dtype=np.float32)
    return [Duplicated(x1, np.ones(3, np.float32))]


def test_gradient_is_exactly_one():
    a = _args()
    autodiff(kern, *a)
    np.testing.assert_array_equal(a[0].shadow, np.ones(3, np.float32))


def test_float64_reference_agrees():
    rep = check_gradient(kern, *_args(), rtol=1e-3, eps=3e-3, fd_dtype=np.float64)
    assert rep.passed, str(rep)
