"""A numba.typed.List argument annotated Duplicated(lst, shadow_lst) was refused as "a jitclass
instance", and a Const one holding the arrays left no way to differentiate them. The list's data
parameter now has a shadow: the shadow list, whose item k holds item k's shadow."""
import numpy as np
from numba import njit, typed

from enzyme_py import Duplicated, autodiff


@njit
def norms(series, out):
    for i in range(len(series)):
        s = series[i]
        acc = 0.0
        for t in range(s.size):
            acc += s[t] * s[t]
        out[i] = acc


def test_typed_list_argument_gets_its_gradient():
    lst = typed.List([np.array([1.0, 2.0]), np.array([3.0, -1.0, 0.5])])
    shadow = typed.List([np.zeros(2), np.zeros(3)])
    autodiff(norms, Duplicated(lst, shadow), Duplicated(np.zeros(2), np.array([1.0, 3.0])))
    np.testing.assert_allclose(shadow[0], [2.0, 4.0])
    np.testing.assert_allclose(shadow[1], [18.0, -6.0, 3.0])
