"""A numba.typed.Dict of parameter arrays annotated Duplicated(d, shadow_d) was refused as "a
jitclass instance" (issue 29: a dict of named parameter arrays). Its data parameter now has a
shadow, the shadow dict, and a lookup by key is the same lookup in the shadow dict."""
import numpy as np
from numba import njit, typed, types

from enzyme_py import Duplicated, autodiff


@njit
def weighted(params, out):
    w = params["w"]
    out[0] = (w * w).sum() * params["c"][0]


def test_typed_dict_argument_gets_its_gradient():
    d = typed.Dict.empty(types.unicode_type, types.float64[::1])
    d["w"], d["c"] = np.array([1.0, -2.0]), np.array([3.0])
    shadow = typed.Dict.empty(types.unicode_type, types.float64[::1])
    shadow["w"], shadow["c"] = np.zeros(2), np.zeros(1)
    autodiff(weighted, Duplicated(d, shadow), Duplicated(np.zeros(1), np.ones(1)))
    np.testing.assert_allclose(shadow["w"], [6.0, -12.0])
    np.testing.assert_allclose(shadow["c"], [5.0])
