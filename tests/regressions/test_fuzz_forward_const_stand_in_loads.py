"""Fuzz seed 2040001857: forward mode refused a kernel that reverse mode differentiates.

`x[1] if c else t[1]` became a select between a pointer into Const `x` and one into the local
`t`, which holds differentiable data, so `x` got a zeroed stand-in shadow (transforms/common/stand_in.py)
and forward mode gave the pointer `x + 8` that shadow. A plain load through that pointer was
then taken as varying, and `x[4] -= x[3] + x[1]`, constant data stored back into Const `x`,
was refused as "active data is stored into constant memory". What a Const parameter's memory
holds is constant (storing differentiable data there is refused), whatever shadow its pointer
has (analysis/activity.py, `_const_memory`).
"""
import numpy as np
from numba import njit

from enzyme_py import Const, Duplicated, Forward, autodiff


@njit
def kernel(a, x, out):
    t = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        t[i] = a[i] * a[i]
    x[4] -= x[3] + x[1]
    v = x[1] if a[0] > 0.5 else t[1]
    out[0] = v * a[2]


def test_forward_mode_reads_const_memory_through_a_stand_in():
    a = np.array([0.25, 1.5, -2.0, 0.75, 3.0])
    x = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    da = np.array([0.3, -1.0, 0.5, 2.0, 0.0])
    xs, out, dout = x.copy(), np.zeros(1), np.zeros(1)
    autodiff(kernel, Duplicated(a, da.copy()), Const(xs), Duplicated(out, dout), mode=Forward)
    # a[0] <= 0.5: v = t[1] = a[1]^2, out = a[1]^2 a[2]
    assert np.isclose(out[0], 1.5 ** 2 * -2.0)
    assert np.isclose(dout[0], 2 * 1.5 * -2.0 * da[1] + 1.5 ** 2 * da[2])
    assert np.isclose(xs[4], 0.5 - (0.4 + 0.2))


def test_forward_mode_reads_const_memory_through_a_stand_in_other_branch():
    a = np.array([0.75, 1.5, -2.0, 0.75, 3.0])
    x = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    da = np.array([0.3, -1.0, 0.5, 2.0, 0.0])
    out, dout = np.zeros(1), np.zeros(1)
    autodiff(kernel, Duplicated(a, da.copy()), Const(x.copy()), Duplicated(out, dout), mode=Forward)
    # a[0] > 0.5: v = x[1], out = x[1] a[2]
    assert np.isclose(out[0], 0.2 * -2.0)
    assert np.isclose(dout[0], 0.2 * da[2])
