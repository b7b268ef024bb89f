"""Assigning a typed List's item, popping from it, storing into or iterating over a typed Dict
were refused with "call to external function `numba_list_setitem` ... Register a derivative for
it, or make it an @njit function": advice a user cannot follow (the function is Numba's runtime).
The refusal now names the Python construct and what to write instead, at the kernel's line, in
both modes, and gives no such advice."""
import numpy as np
import pytest
from numba import njit, typed, types

from enzyme_py import Duplicated, Forward, Reverse, UnsupportedError, autodiff


@njit
def setitem(series, x, out):
    series[0] = x
    out[0] = np.sum(series[0] * series[1])


@njit
def pop(series, out):
    s = series.pop()
    out[0] = np.sum(s * s)


@njit
def store(params, x, out):
    params["w"] = x * 2.0
    out[0] = np.sum(params["w"])


@njit
def iterate(params, out):
    for v in params.values():
        out[0] += np.sum(v * v)


def _list():
    return typed.List([np.ones(3), np.ones(3)]), typed.List([np.zeros(3), np.zeros(3)])


def _dict():
    d, s = (typed.Dict.empty(types.unicode_type, types.float64[::1]) for _ in range(2))
    d["w"], s["w"] = np.ones(3), np.zeros(3)
    return d, s


CASES = {
    "setitem": (setitem, lambda: (Duplicated(*_list()), Duplicated(np.ones(3), np.zeros(3))),
                "assigning an item of a typed List", 15),
    "pop": (pop, lambda: (Duplicated(*_list()),), "removing items of a typed List", 21),
    "store": (store, lambda: (Duplicated(*_dict()), Duplicated(np.ones(3), np.zeros(3))),
              "storing into a typed Dict", 27),
    "iterate": (iterate, lambda: (Duplicated(*_dict()),), "iterating over a typed Dict", 33),
}


@pytest.mark.parametrize("mode", [Reverse, Forward], ids=["reverse", "forward"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_refusal_names_the_construct(case, mode):
    kern, args, words, line = CASES[case]
    with pytest.raises(UnsupportedError, match=words) as info:
        autodiff(kern, *args(), Duplicated(np.zeros(1), np.ones(1)), mode=mode)
    assert info.value.location[0] == __file__
    assert abs(info.value.location[1] - line) <= 2
    assert "Register a derivative" not in str(info.value)
