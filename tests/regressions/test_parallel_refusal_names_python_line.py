"""A refused parallel reduction names the Python file and line of the loop body, not a line of
the generated parallel-loop function ("<string>:3"), and says what in the Python code caused it.
Before: "... at <string>:3" or no location."""
import re

import numpy as np
import pytest
from numba import njit, prange

from enzyme_py import Duplicated, UnsupportedError, autodiff


@njit(parallel=True)
def product(x):
    p = 1.0
    for i in prange(x.shape[0]):
        p *= x[i]       # the refused line
    return p


def _line(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn.py_func)
    return start + next(k for k, s in enumerate(lines) if text in s)


def test_product_reduction_names_its_line():
    x = np.linspace(0.5, 1.5, 9)
    with pytest.raises(UnsupportedError) as err:
        autodiff(product, Duplicated(x, np.zeros(9)))
    msg = str(err.value)
    assert "reduction variable" in msg and "`+=`" in msg
    assert re.search(rf"{re.escape(__file__)}:{_line(product, 'the refused line')}\b", msg), msg
    assert err.value.location == (__file__, _line(product, "the refused line"))
