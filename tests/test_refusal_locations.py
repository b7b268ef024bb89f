"""The refusal catalogue: every kind of UnsupportedError the suite provokes, in reverse, forward
and parallel code, names a Python file and line (err.location and the message)."""
import inspect

import numba
import numpy as np
import pytest
from numba import njit, prange

import parallel_kernels as K
import enzyme_py
from enzyme_py import Const, Duplicated, Forward, UnsupportedError, autodiff
from test_bad_input import bessel
from test_custom import args as atan_args, uses_atan
from test_custom_rules import softplus
from test_complex_lapack import crandn, eig_loss
from test_real_kernels import float_bits, writes_scratch
from regressions.test_list_of_lists_refused import nested
from regressions.test_thread_scratch_refusal_location import demean
from regressions.test_typed_container_refusals_say_what_to_write import CASES as CONTAINER_CASES
from test_prange_thread_scratch import scratch_read_after


@njit
def bits(x):
    i = np.empty(1, np.float64)
    i[0] = x[0]
    v = i.view(np.int64)[0] & 0x7FFFFFFFFFFFFFFF
    return np.array([v]).view(np.float64)[0]


@njit(parallel=True)
def thread_product(x):
    acc = np.ones(numba.get_num_threads())
    for i in prange(x.shape[0]):
        t = numba.get_thread_id()
        acc[t] = acc[t] * x[i]
    return acc.sum()


@njit
def power(x, n):
    return 1.0 if n == 0 else x * power(x, n - 1)


@njit(parallel=True)
def par_power(x, y):
    for i in prange(x.shape[0]):
        y[i] = power(x[i], 3)


@njit
def softplus_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += softplus(x[i]) ** 2
    return s


def _x(n=3):
    return np.linspace(0.3, 0.9, n)


def _m():
    return np.random.default_rng(0).standard_normal((6, 4))


def _state():
    return np.random.default_rng(2).standard_normal((40, 2))


CATALOGUE = {
    "no rule (j0)": lambda: autodiff(bessel, Duplicated(_x(), np.zeros(3)),
                                     Duplicated(np.zeros(3), np.ones(3))),
    "float read as integer": lambda: autodiff(float_bits, Duplicated(_x(2), np.zeros(2)),
                                              Duplicated(np.zeros(1), np.ones(1))),
    "active into Const": lambda: autodiff(writes_scratch, Duplicated(_x(), np.zeros(3)),
                                          Const(np.zeros(3)), Duplicated(np.zeros(1), np.ones(1))),
    "complex eigenvectors reverse": lambda: autodiff(eig_loss, Duplicated(crandn(3, 3),
                                                                         np.zeros((3, 3), complex))),
    "complex eigenvectors forward": lambda: autodiff(eig_loss, Duplicated(crandn(3, 3),
                                                                         np.zeros((3, 3), complex)),
                                                     mode=Forward),
    "bits forward": lambda: autodiff(bits, Duplicated(np.array([-2.0]), np.ones(1)), mode=Forward),
    "list of lists reverse": lambda: autodiff(nested, Duplicated(np.linspace(0.2, 1, 6),
                                                                 np.zeros(6))),
    "list of lists forward": lambda: autodiff(nested, Duplicated(np.linspace(0.2, 1, 6),
                                                                 np.ones(6)), mode=Forward),
    "parallel product": lambda: autodiff(K.product, Duplicated(_x(9), np.zeros(9))),
    "thread-indexed product": lambda: autodiff(thread_product, Duplicated(_x(9), np.zeros(9))),
    "thread scratch read before written": lambda: autodiff(demean, Duplicated(_m(), np.zeros((6, 4))),
                                               Duplicated(np.zeros((6, 4)), np.ones((6, 4)))),
    "thread scratch read after the loop": lambda: autodiff(
        scratch_read_after, Duplicated(_m(), np.zeros((6, 4))),
        Duplicated(np.zeros((6, 4)), np.ones((6, 4)))),
    "deterministic atomic updates": lambda: autodiff(
        K.pull_column, Duplicated(_state(), np.ones((40, 2))),
        Const(np.random.default_rng(2).integers(0, 40, 40)), deterministic=True),
    "recursive call in a parallel loop": lambda: autodiff(
        par_power, Duplicated(_x(8), np.zeros(8)), Duplicated(np.zeros(8), np.ones(8))),
    "external function reverse": lambda: autodiff(uses_atan, *atan_args()),
    "external function forward": lambda: autodiff(
        uses_atan, Duplicated(np.linspace(0.2, 0.9, 4), np.ones(4)),
        Duplicated(np.zeros(4), np.zeros(4)), mode=Forward),
    "rule inside a Hessian-vector product": lambda: enzyme_py.hessian_vector_product(
        softplus_squares, _x(4), np.ones(4)),
    "typed List item assignment": lambda: _container("setitem"),
    "typed Dict iteration forward": lambda: _container("iterate", Forward),
}


def _container(case, mode=enzyme_py.Reverse):
    kern, args, _, _ = CONTAINER_CASES[case]
    autodiff(kern, *args(), Duplicated(np.zeros(1), np.ones(1)), mode=mode)


def _cases():
    for name in sorted(CATALOGUE):
        c = CATALOGUE[name]
        yield pytest.param(c.values[0], marks=c.marks, id=name) if hasattr(c, "marks") else \
            pytest.param(c, id=name)


@pytest.mark.parametrize("case", list(_cases()))
def test_refusal_names_python_file_and_line(case):
    with pytest.raises(UnsupportedError) as err:
        case()
    loc = err.value.location
    assert loc is not None, str(err.value)
    assert str(loc[0]).endswith(".py") and loc[1] > 0, loc
    assert f"{loc[0]}:{loc[1]}" in str(err.value)


def test_hvp_refusal_names_the_kernel_line():
    """Forward mode over the HVP's gradient refuses the custom rule's call at the kernel's line
    of that call (not a line of enzyme_py)."""
    with pytest.raises(UnsupportedError) as err:
        enzyme_py.hessian_vector_product(softplus_squares, _x(4), np.ones(4))
    lines, first = inspect.getsourcelines(softplus_squares.py_func)
    line = first + next(k for k, t in enumerate(lines) if "softplus(x[i])" in t)
    assert (str(err.value.location[0]), err.value.location[1]) == (__file__, line)
