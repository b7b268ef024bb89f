"""The reverse of `p += t` passes the shadow of p through (ir_passes/transforms/reverse/shadows/memory.py):
checked against central finite differences, including updates whose t reads the same array
(an aliasing load between the update's load and its store) and a float32 update."""
import numpy as np
from numba import njit

from enzyme_py import Active, Duplicated, check_gradient


@njit
def accumulate(x, y, a):
    for i in range(x.shape[0]):
        y[i] += a * x[i] * x[i]          # load y[i], fadd, store y[i]


@njit
def subtract(x, y):
    for i in range(x.shape[0]):
        y[i] -= 0.5 * np.sin(x[i])       # the fsub form


@njit
def self_referencing(y, x):
    n = y.shape[0]
    for k in range(3):
        for i in range(n):
            y[i] += y[(i + 1) % n] * x[i]    # t reads y itself: an aliasing load in between


@njit
def single_precision(y, x):
    for i in range(x.shape[0]):
        y[i] += x[i] * x[i]


def test_accumulate_matches_finite_differences():
    rng = np.random.default_rng(1)
    rep = check_gradient(accumulate, Duplicated(rng.standard_normal(7), np.zeros(7)),
                         Duplicated(rng.standard_normal(7), rng.standard_normal(7)), Active(0.7))
    assert rep.passed, str(rep)


def test_subtract_matches_finite_differences():
    rng = np.random.default_rng(4)
    rep = check_gradient(subtract, Duplicated(rng.standard_normal(7), np.zeros(7)),
                         Duplicated(rng.standard_normal(7), rng.standard_normal(7)))
    assert rep.passed, str(rep)


def test_update_reading_its_own_array():
    rng = np.random.default_rng(2)
    rep = check_gradient(self_referencing, Duplicated(rng.uniform(-1, 1, 6), rng.standard_normal(6)),
                         Duplicated(rng.uniform(-1, 1, 6), np.zeros(6)))
    assert rep.passed, str(rep)


def test_float32_update():
    rng = np.random.default_rng(3)
    y = rng.uniform(-1, 1, 5).astype(np.float32)
    x = rng.uniform(-1, 1, 5).astype(np.float32)
    rep = check_gradient(single_precision, Duplicated(y, rng.standard_normal(5).astype(np.float32)),
                         Duplicated(x, np.zeros(5, np.float32)))
    assert rep.passed, str(rep)
