"""Fuzzer reproducer (wrong_gradient): np.max / np.min drop the derivative of the first element.

Found by the differential fuzzer (python -m tools.fuzz --n 200 --seed 7: seeds 7000019,
7000050, 7000095, 7000174; also seed 119), shrunk automatically. When the extremum is the array's
first element, autodiff gives it derivative 0 (finite differences: 1). Other positions are right.

Root cause (fixed): Numba's np.max/np.min read the first element (`a.flat[0]`, through
ravel/reshape) via a data pointer that is stored into a stack struct (alloca) and loaded back;
that reloaded pointer gets no shadow, so the adjoint of that load is dropped.
"""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, check_gradient

# Fixed by shadowing pointers stored into local memory (activity.py, forward_sweep.py).


@njit
def max_return(x0):
    return np.max(x0)


@njit
def min_return_2d(a):
    return np.min(a)


@njit
def max_into_self(x0):
    x0[0] = np.max(x0)


@njit
def min_after_write(x0):
    x0[1] = 0.5
    x0[0] = np.min(x0)


def test_fuzz_max_of_one_element():
    report = check_gradient(max_return, Duplicated(np.array([0.5]), np.array([1.0])), rtol=1e-6, eps=1e-6)
    assert report.passed, str(report)


def test_fuzz_max_is_first_element():
    report = check_gradient(max_return, Duplicated(np.array([3.0, 2.0, 1.0]), np.zeros(3)))
    assert report.passed, str(report)


def test_fuzz_min_2d_one_element():
    report = check_gradient(min_return_2d, Duplicated(np.array([[0.5]]), np.array([[1.0]])))
    assert report.passed, str(report)


def test_fuzz_max_stored_into_its_own_array():
    report = check_gradient(max_into_self, Duplicated(np.array([0.5]), np.array([1.0])))
    assert report.passed, str(report)


def test_fuzz_min_after_a_write():
    report = check_gradient(min_after_write, Duplicated(np.array([-1.1, -1.3]), np.array([1.0, 1.0])))
    assert report.passed, str(report)


def test_max_elsewhere_is_right():
    report = check_gradient(max_return, Duplicated(np.array([1.0, 3.0, 2.0]), np.zeros(3)))
    assert report.passed, str(report)
