"""Integer recurrences run backwards in the reverse sweep instead of being taped
(ir_passes/transforms/reverse/tape/recurrence.py): GMM's packed index that grows by an inner loop's trip
count, a step read from an integer array, a step chosen by an if/else. Each gradient is checked
against finite differences, and explain shows what is taped: nothing per iteration for the
recurrence, one value per entry of its loop (a frame slot for an outermost loop)."""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, check_gradient, explain


@njit
def packed(x, y, z):
    n = x.shape[0]
    for r in range(2):
        li = n                          # grows by n - i - 1 per i: the inner loop's trip count
        for i in range(n):
            for j in range(i + 1, n):
                y[j] += z[li] * x[i] * x[j]
                li += 1


# The single loops below carry an active sum, so their iterations are not reversed one at a
# time (fusion.py), which would need no tape at all.

@njit
def strided(x, y):
    n = x.shape[0]
    k = 0
    s = 0.0
    for i in range(n):
        s = s * x[i] + x[min(k, n - 1)]
        k += (i & 1) + 1                # a step that changes every iteration
    y[0] += s


@njit
def branchy(x, y):
    n = x.shape[0]
    k = 0
    s = 0.0
    for i in range(n):
        s = s * x[i] + x[min(k, n - 1)]
        if x[i] > 0.0:
            k += 2
        else:
            k += 1
    y[0] += s


@njit
def doubling(x, y):
    n = x.shape[0]
    k = 1
    s = 0.0
    for i in range(n):
        s = s * x[i] + x[min(k, n - 1)]
        k = 3 * k + 1                   # not an add of a known step: taped, still right
    y[0] += s


def _dups(seed, *sizes):
    rng = np.random.default_rng(seed)
    return [Duplicated(rng.uniform(-1, 1, s), rng.standard_normal(s)) for s in sizes]


def _carried(kernel, args):
    """Why integer values are taped (the carried float sums aside)."""
    e = explain(kernel, *args)
    return [c.reason for c in e.cached if "double" not in c.instruction]


def test_packed_index():
    x, y, z = _dups(0, 6, 6, 6 + 15)
    assert check_gradient(packed, x, y, z).passed
    reasons = _carried(packed, (x, y, z))
    assert "a recurrence's value in its loop's last iteration" in reasons
    assert not any("carried" in r or "operands" in r for r in reasons)


def test_varying_step():
    x, y = _dups(1, 7, 7)
    assert check_gradient(strided, x, y).passed
    assert _carried(strided, (x, y)) == []     # k's last value sits in a frame slot


def test_step_from_a_branch():
    x, y = _dups(2, 7, 7)
    assert check_gradient(branchy, x, y).passed
    assert _carried(branchy, (x, y)) == []


def test_other_recurrences_are_taped():
    x, y = _dups(3, 7, 7)
    assert check_gradient(doubling, x, y).passed
    assert _carried(doubling, (x, y))          # k, or what is computed from it, per iteration


@njit
def guarded(x, y, steps):
    n = x.shape[0]
    k = 0
    s = 0.0
    for i in range(n):
        s = s * x[i] + x[min(k, n - 1)]
        if i + 1 < steps.shape[0]:
            k += steps[i + 1]           # a load on one arm only: never evaluated speculatively
        else:
            k += 1
    y[0] += s


def test_load_on_one_arm():
    x, y = _dups(4, 7, 7)
    assert check_gradient(guarded, x, y, np.array([1, 2, 1])).passed
