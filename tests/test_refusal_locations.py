"""The refusal catalogue: every kind of UnsupportedError the suite provokes, in reverse, forward
and parallel code, names a Python file and line (err.location and the message)."""
import numpy as np
import pytest
from numba import njit

import parallel_kernels as K
from enzyme_py import Const, Duplicated, Forward, UnsupportedError, autodiff
from test_bad_input import bessel
from test_linalg_lapack import eig_sum
from test_real_kernels import float_bits, writes_scratch
from regressions.test_list_of_lists_refused import nested


@njit
def bits(x):
    i = np.empty(1, np.float64)
    i[0] = x[0]
    v = i.view(np.int64)[0] & 0x7FFFFFFFFFFFFFFF
    return np.array([v]).view(np.float64)[0]


def _x(n=3):
    return np.linspace(0.3, 0.9, n)


def _spd():
    a = np.random.default_rng(4).standard_normal((3, 3))
    return a @ a.T + 3 * np.eye(3)


CATALOGUE = {
    "no rule (j0)": lambda: autodiff(bessel, Duplicated(_x(), np.zeros(3)),
                                     Duplicated(np.zeros(3), np.ones(3))),
    "float read as integer": lambda: autodiff(float_bits, Duplicated(_x(2), np.zeros(2)),
                                              Duplicated(np.zeros(1), np.ones(1))),
    "active into Const": lambda: autodiff(writes_scratch, Duplicated(_x(), np.zeros(3)),
                                          Const(np.zeros(3)), Duplicated(np.zeros(1), np.ones(1))),
    "complex LAPACK reverse": lambda: autodiff(eig_sum, Duplicated(_spd(), np.ones((3, 3)))),
    "complex LAPACK forward": lambda: autodiff(eig_sum, Duplicated(_spd(), np.ones((3, 3))),
                                               mode=Forward),
    "bits forward": lambda: autodiff(bits, Duplicated(np.array([-2.0]), np.ones(1)), mode=Forward),
    "list of lists reverse": lambda: autodiff(nested, Duplicated(np.linspace(0.2, 1, 6),
                                                                 np.zeros(6))),
    "list of lists forward": lambda: autodiff(nested, Duplicated(np.linspace(0.2, 1, 6),
                                                                 np.ones(6)), mode=Forward),
    "parallel product": lambda: autodiff(K.product, Duplicated(_x(9), np.zeros(9))),
}


@pytest.mark.parametrize("case", sorted(CATALOGUE))
def test_refusal_names_python_file_and_line(case):
    with pytest.raises(UnsupportedError) as err:
        CATALOGUE[case]()
    loc = err.value.location
    assert loc is not None, str(err.value)
    assert str(loc[0]).endswith(".py") and loc[1] > 0, loc
    assert f"{loc[0]}:{loc[1]}" in str(err.value)
