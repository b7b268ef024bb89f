"""A numba.typed.List built inside the kernel from Duplicated arrays (issue 29's pairwise
distance over series of unequal length) was refused: "call to external function
`numba_list_append` with differentiable memory". Numba's list runtime is now described to
ir_passes as data (bridge/nrt.py): the list's constructor makes a shadow list, append copies each
item's shadow into it, the item storage's getter is called on the shadow list."""
import numpy as np
from numba import njit, typed

from enzyme_py import Duplicated, autodiff, check_gradient

from nrt_stats import unfreed


@njit
def built(a, b, out):
    series = typed.List()
    series.append(a)
    series.append(b)
    for i in range(len(series)):
        s = series[i]
        acc = 0.0
        for t in range(s.size):
            acc += s[t] * s[t]
        out[i] = acc


def test_list_built_in_the_kernel_reverse():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(3), rng.standard_normal(5)
    report = check_gradient(built, Duplicated(a, np.zeros(3)), Duplicated(b, np.zeros(5)),
                            Duplicated(np.zeros(2), np.zeros(2)), rng=1)
    assert report.passed, report
    da, db = np.zeros(3), np.zeros(5)
    autodiff(built, Duplicated(a, da), Duplicated(b, db), Duplicated(np.zeros(2), np.array([1.0, -2.0])))
    np.testing.assert_allclose(da, 2 * a, rtol=1e-14)
    np.testing.assert_allclose(db, -4 * b, rtol=1e-14)
    assert unfreed(lambda: autodiff(built, Duplicated(a, da), Duplicated(b, db),
                                    Duplicated(np.zeros(2), np.ones(2)))) == (0, 0)
