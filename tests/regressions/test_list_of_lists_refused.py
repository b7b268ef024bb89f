"""A list of lists of arrays got a silent zero derivative in both modes: the inner list's handle
is stored into the outer list, whose payload has no shadow (it holds no pointer with a shadow:
the handle's data has one, not the handle), so the payload asked of the handle loaded back had
none either. Refused now with a clear message (analysis/activity.check_handle_stores); lists of
arrays and of tuples holding arrays are unaffected."""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, Forward, UnsupportedError, autodiff


@njit
def nested(x):
    outer = []
    for i in range(3):
        outer.append([x[i:i + 2] * 2.0, x[i + 1:i + 3]])
    s = 0.0
    for inner in outer:
        for p in inner:
            s += np.sum(p * p)
    return s


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_list_of_lists_refused(mode):
    x = np.linspace(0.2, 1.0, 6)
    with pytest.raises(UnsupportedError, match="list of lists"):
        if mode == "forward":
            autodiff(nested, Duplicated(x, np.ones(6)), mode=Forward)
        else:
            autodiff(nested, Duplicated(x, np.zeros(6)), seed=1.0)
