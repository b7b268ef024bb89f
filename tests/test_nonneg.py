"""Numba's wraparound tests of negative indices are folded before AD when the index is provably
non-negative (ir_passes/transforms/prepare/fold_sign_tests.py), and kept when it can be negative. Gradients are
checked against finite differences either way, and the generated code shows which tests went."""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, check_gradient, inspect


@njit
def forward_index(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i]


@njit
def shifted_index(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i - 2] * x[i]           # i - 2 < 0 for i < 2: wraps to the end


@njit
def triangular(x, y, z):
    n = x.shape[0]
    li = n                               # GMM's packed index: carried across the i loop
    for i in range(n):
        for j in range(i + 1, n):
            y[j] += z[li] * x[i]
            li += 1


@njit
def packed_lower(x, y, z):
    d = x.shape[0]
    li = 0                               # GMM's packed index: from 0, stepping with j
    for i in range(d):
        for j in range(i + 1, d):
            y[j] += z[li] * x[i]
            li += 1


def _args(seed):
    rng = np.random.default_rng(seed)
    return (Duplicated(rng.uniform(-1, 1, 6), np.zeros(6)),
            Duplicated(rng.uniform(-1, 1, 6), rng.standard_normal(6)))


def _fold(kernel, args):
    """(sign tests in the cleaned kernel, how many fold_sign_tests folds), array lengths known."""
    import numba
    from ir_passes import parse_module
    from ir_passes.transforms.prepare.fold_sign_tests import fold_sign_tests
    from enzyme_py.bridge.convention import array_extents
    g = inspect(kernel, *args)
    fn = next(f for f in parse_module(g.cleaned).functions.values()
              if not f.is_declaration and kernel.__name__ in f.name)
    lengths = [n for e in array_extents(tuple(numba.typeof(a.value) for a in args)).values()
               for n, _ in e.dims]
    tests = sum(i.opcode == "icmp" and i.pred == "slt" and getattr(i.ops[1], "value", None) == 0
                for i in fn.instructions())
    return tests, fold_sign_tests(fn, lengths)


def test_counter_index():
    assert check_gradient(forward_index, *_args(0)).passed


def test_negative_index_keeps_its_wraparound():
    assert check_gradient(shifted_index, *_args(1)).passed
    assert _fold(shifted_index, _args(1))[1] == 0


def test_carried_index_is_folded():
    rng = np.random.default_rng(2)
    args = _args(2) + (Duplicated(rng.uniform(-1, 1, 6 + 15), np.zeros(21)),)
    assert check_gradient(triangular, *args).passed
    tests, folded = _fold(triangular, args)
    assert tests >= 1 and folded == tests


def test_packed_index_from_zero_is_folded():
    """LLVM exits the inner loop on li (no wrap flags) instead of j: both still count up from
    non-negative starts, so both tests fold, and the gradient is unchanged."""
    rng = np.random.default_rng(3)
    args = _args(3) + (Duplicated(rng.uniform(-1, 1, 15), np.zeros(15)),)
    assert check_gradient(packed_lower, *args).passed
    tests, folded = _fold(packed_lower, args)
    assert tests >= 2 and folded == tests
