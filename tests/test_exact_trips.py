"""Loops whose entries run a trip count the reverse sweep can compute (analysis/tripcount.py,
`exact_trip`) need no loop start on the tape: the reverse sweep derives where each entry began
from its counter. Checked on triangular, reversed and countdown nests against finite
differences, with explain showing no "loop start" entries; a loop that can `break` keeps its
taped start and is still right."""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, check_gradient, explain


@njit
def triangular(x, y):
    n = x.shape[0]
    for i in range(n):
        for j in range(i + 1, n):           # a trip count that depends on i
            y[j] += x[i] * np.sin(x[j])


@njit
def reversed_ranges(x, y):
    n = x.shape[0]
    for i in range(n - 1, -1, -1):
        s = 0.0
        for j in range(i, -1, -1):         # step -1, down to 0
            s += x[j] * x[i]
        y[i] = s


@njit
def while_countdown(x, y):
    n = x.shape[0]
    i = 0
    while i < n:
        k = n - i
        while k > 0:
            y[i] += x[k - 1] * x[i]
            k -= 1
        i += 1


@njit
def with_break(x, y):
    n = x.shape[0]
    for i in range(n):
        for j in range(n):
            if x[j] > 0.8:                  # two exits: the start stays on the tape
                break
            y[i] += x[j] * x[i]


def _args(n=7, seed=0):
    rng = np.random.default_rng(seed)
    return (Duplicated(rng.uniform(-1, 1, n), np.zeros(n)),
            Duplicated(rng.uniform(-1, 1, n), rng.standard_normal(n)))


def _starts(kernel):
    e = explain(kernel, *_args())
    return sum(c.instruction == "the loop counter's value on entering the loop" for c in e.cached)


def test_triangular():
    assert check_gradient(triangular, *_args()).passed
    assert _starts(triangular) == 0


def test_reversed_ranges():
    assert check_gradient(reversed_ranges, *_args(seed=1)).passed
    assert _starts(reversed_ranges) == 0


def test_while_countdown():
    assert check_gradient(while_countdown, *_args(seed=2)).passed
    assert _starts(while_countdown) == 0


def test_break_keeps_its_start_and_is_right():
    x, y = _args(seed=3)
    x.value[2] = 0.9
    assert check_gradient(with_break, x, y).passed
    assert _starts(with_break) >= 1
