"""Fused loops (ir_passes/transforms/reverse/loops/fusion.py): a loop with independent iterations is reversed
one iteration at a time inside the forward sweep. Each case: fused or not, and right."""
import numba
import numpy as np
import pytest

from enzyme_py import Active, Duplicated, autodiff, check_gradient, inspect

rng = np.random.default_rng(5)


@numba.njit
def elementwise(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i] + np.sin(x[i])


@numba.njit
def in_place(x):
    for i in range(x.shape[0]):
        x[i] = np.sin(x[i]) * x[i]


@numba.njit
def stencil_into_other(x, y, a):
    for i in range(y.shape[0]):
        y[i] = a * x[i] * x[i + 1]


@numba.njit
def carried_through_memory(x):
    for i in range(1, x.shape[0]):
        x[i] = x[i - 1] * x[i]


@numba.njit
def loop_then_sum(x, y):
    for i in range(x.shape[0]):
        y[i] = np.exp(x[i])
    return y.sum()


@numba.njit
def reduction(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.cos(x[i])
    return s


@numba.njit
def may_raise(x, y):
    for i in range(x.shape[0]):
        y[i] = 1.0 / x[i]


def _dup(a):
    return Duplicated(a, rng.standard_normal(a.shape))


def _fused(kernel, *args) -> bool:
    g = inspect(kernel, *args)
    assert g.error is None, g.error
    return "resume." in g.generated


CASES = [
    ("elementwise", elementwise, lambda: (_dup(rng.standard_normal(8)), _dup(np.zeros(8))), True),
    ("in_place", in_place, lambda: (_dup(rng.standard_normal(8)),), True),
    ("stencil", stencil_into_other,
     lambda: (_dup(rng.standard_normal(9)), _dup(np.zeros(8)), Active(0.7)), True),
    ("carried", carried_through_memory, lambda: (_dup(rng.uniform(0.5, 1.5, 8)),), False),
    ("then_sum", loop_then_sum, lambda: (_dup(rng.standard_normal(8)), _dup(np.zeros(8))), False),
    ("reduction", reduction, lambda: (_dup(rng.standard_normal(8)),), False),
    ("may_raise", may_raise, lambda: (_dup(rng.uniform(1, 2, 8)), _dup(np.zeros(8))), False),
]


@pytest.mark.parametrize("name,kernel,make,fused", CASES, ids=[c[0] for c in CASES])
def test_fusion_decision_and_gradient(name, kernel, make, fused):
    args = make()
    assert _fused(kernel, *args) is fused
    rep = check_gradient(kernel, *make())
    assert rep.passed, str(rep)


def test_aliased_arrays_are_not_fused():
    x, dx = rng.standard_normal(8), np.zeros(8)
    assert not _fused(elementwise, Duplicated(x, dx), Duplicated(x, dx))


def test_a_raising_kernel_leaves_shadows_untouched():
    x = np.array([1.0, 2.0, 0.0, 4.0])
    dx, dy = np.full(4, 3.0), np.full(4, 5.0)
    with pytest.raises(ZeroDivisionError):
        autodiff(may_raise, Duplicated(x, dx), Duplicated(np.zeros(4), dy))
    assert (dx == 3.0).all() and (dy == 5.0).all()
