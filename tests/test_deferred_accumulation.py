"""Deferred shadow accumulation (ir_passes/transforms/reverse/shadows/deferred.py): adjoints of a load at a
loop-invariant address collect in a slot and reach the shadow when the reverse loop ends."""
import numba
import numpy as np

from enzyme_py import Active, Duplicated, check_gradient, inspect

rng = np.random.default_rng(11)


@numba.njit
def pairwise(x, out):
    """x[i] is read in the inner loop, conditionally (j == i skips)."""
    n = x.shape[0]
    for i in range(n):
        acc = 0.0
        for j in range(n):
            if j == i:
                continue
            acc += np.sin(x[i] - x[j]) * x[i]
        out[i] = acc


@numba.njit
def scale_rest_in_place(x):
    """x[0] is invariant but the loop overwrites x: no deferral (its reverse zeroes shadows)."""
    for j in range(1, x.shape[0]):
        x[j] = x[j] * x[0]


@numba.njit
def scale_other(x, y, out, a):
    """x[0] is invariant and the loop stores only into another array (the update after the loop
    keeps the loop from being fused, fusion.py)."""
    for j in range(y.shape[0]):
        if y[j] > 0.0:
            out[j] = x[0] * y[j] * a
    out[0] = out[0] * x[1]


def _dup(a):
    return Duplicated(a, rng.standard_normal(a.shape))


def test_pairwise_matches_finite_differences():
    x = rng.standard_normal(7)
    rep = check_gradient(pairwise, _dup(x), _dup(np.zeros(7)))
    assert rep.passed, str(rep)


def test_in_place_loop_is_not_deferred_and_is_right():
    x = rng.uniform(0.5, 1.5, 6)
    rep = check_gradient(scale_rest_in_place, _dup(x))
    assert rep.passed, str(rep)
    g = inspect(scale_rest_in_place, Duplicated(x, np.zeros(6)))
    assert "%acc." not in g.generated


def test_other_array_store_is_deferred_and_right():
    x, y = rng.standard_normal(3), rng.standard_normal(9)
    rep = check_gradient(scale_other, _dup(x), _dup(y), _dup(np.zeros(9)), Active(1.3))
    assert rep.passed, str(rep)
    g = inspect(scale_other, Duplicated(x, np.zeros(3)), Duplicated(y, np.zeros(9)),
                Duplicated(np.zeros(9), np.zeros(9)), Active(1.3))
    assert "%acc." in g.generated        # the disjoint variant defers x[0]'s accumulation


def test_aliased_arrays_are_not_deferred():
    x = rng.standard_normal(9)
    dx = np.zeros(9)
    # out and x are the same memory: the store into out may overwrite x[0]'s shadow.
    g = inspect(scale_other, Duplicated(x, dx), Duplicated(x, dx), Duplicated(x, dx), Active(1.3))
    assert "%acc." not in g.generated
    rep = check_gradient(scale_other, _dup(x.copy()), _dup(rng.standard_normal(9)),
                         _dup(np.zeros(9)), Active(1.3))
    assert rep.passed, str(rep)
