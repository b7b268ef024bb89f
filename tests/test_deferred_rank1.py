"""A gemv's rank-1 shadow updates (dA += dy x^T) deferred over a loop and added as one gemm when
the reverse sweep leaves it (transforms/reverse/shadows/deferred_rank1.py), against finite differences:
both storage orders (the gemv's 'n' and 't' flags) and both float types, two products with one
matrix per step, a deferral over two nested loops, a loop that runs no iteration, a buffer added
inside the loop when full, a checkpointed time loop, and a matrix written inside the loop (the
updates are then made at once). The generated module says which."""
import re

import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, check_gradient, compile_gradient
from fd_modes import check_reverse
from ir_passes.transforms.reverse.shadows import deferred_rank1
from linalg_kernels import rnn


@njit
def two_products(W, xs, h):
    # W is read by two products per step: both defer into shadow(W)
    for t in range(xs.shape[0]):
        g = np.sin(W @ xs[t])
        h[:] = np.tanh(W @ h + g)
    return np.sum(h)


@njit
def epochs(W, xs, h0, n):
    # the time loop inside an outer loop: the updates wait until the outer loop is reversed
    total = 0.0
    for e in range(n):
        h = h0.copy()
        for t in range(xs.shape[0]):
            h = np.tanh(W @ h + xs[t])
        total += np.sum(h * h)
    return total


@njit
def decayed(W, xs, h):
    # W changes every step: its shadow is read and scaled in the loop's reverse
    for t in range(xs.shape[0]):
        h[:] = np.tanh(W @ h + xs[t])
        W *= 0.9
    return np.sum(h * h)


def mat(r, shape, dtype=np.float64, order="C"):
    a = np.asarray(r.uniform(-1, 1, shape), dtype=dtype)
    return np.asfortranarray(a) if order == "F" else a


def generated(kernel, *args):
    ann = [Duplicated(a, np.zeros_like(a)) if isinstance(a, np.ndarray) else a for a in args]
    return compile_gradient(kernel, *ann).generated


def deferred(text) -> bool:
    """Does the gradient add its rank-1 updates after the loop (a gemm, no rank-1 helper)?"""
    return re.search(r"define internal void @\S*\.rank1\.0\(", text) is not None and \
        "@enzpy.rank1." not in text


@pytest.mark.parametrize("order,dtype", [("C", np.float64), ("F", np.float64),
                                         ("C", np.float32), ("F", np.float32)])
def test_rnn_updates_deferred(order, dtype):
    r = np.random.default_rng(1)
    args = (mat(r, (5, 5), dtype, order) * 0.5, mat(r, (5, 3), dtype, order),
            mat(r, (7, 3), dtype), mat(r, 5, dtype))
    assert deferred(generated(rnn, *(a.copy(order="K") for a in args)))
    check_reverse(rnn, *args)


def test_two_products_of_one_matrix():
    r = np.random.default_rng(2)
    args = (mat(r, (4, 4)) * 0.6, mat(r, (6, 4)), mat(r, 4))
    assert deferred(generated(two_products, *(a.copy() for a in args)))
    check_reverse(two_products, *args)


def test_nested_loops():
    r = np.random.default_rng(3)
    args = (mat(r, (4, 4)) * 0.6, mat(r, (5, 4)), mat(r, 4), 3)
    assert deferred(generated(epochs, *(a.copy() if isinstance(a, np.ndarray) else a
                                        for a in args)))
    check_reverse(epochs, *args)


def test_no_iteration():
    r = np.random.default_rng(4)
    W, U, h = mat(r, (4, 4)), mat(r, (4, 3)), mat(r, 4)
    dW, dU, dh = np.zeros_like(W), np.zeros_like(U), np.zeros_like(h)
    xs, dxs = np.zeros((0, 3)), np.zeros((0, 3))
    g = compile_gradient(rnn, Duplicated(W, dW), Duplicated(U, dU), Duplicated(xs, dxs),
                         Duplicated(h, dh))
    g.entry(W, U, xs, h, dW, dU, dxs, dh, 1.0)
    assert not dW.any() and not dU.any()
    np.testing.assert_allclose(dh, 2 * h)


def test_matrix_written_in_the_loop_updates_at_once():
    r = np.random.default_rng(5)
    args = (mat(r, (4, 4)) * 0.6, mat(r, (5, 4)), mat(r, 4))
    assert not deferred(generated(decayed, *(a.copy() for a in args)))
    check_reverse(decayed, *args)


def test_checkpointed_time_loop():
    # snapshots and recomputed steps (docs/checkpointing.md) around the deferred updates
    r = np.random.default_rng(6)
    W, U, xs, h = mat(r, (6, 6)) * 0.5, mat(r, (6, 3)), mat(r, (12, 3)), mat(r, 6)
    ann = [Duplicated(a, np.zeros_like(a)) for a in (W, U, xs, h)]
    report = check_gradient(rnn, *ann, memory="4KB", fd_dtype=np.float64, rtol=1e-6, rng=0)
    assert report.passed, str(report)


@njit
def rnn_batched(W, U, xs, h):
    for t in range(xs.shape[0]):
        h[:] = np.tanh(W @ h + U @ xs[t])
    return np.sum(h * h)


def test_full_buffer_added_inside_the_loop(monkeypatch):
    # a buffer over LIMIT bytes is added and emptied at once: here every two or three steps
    monkeypatch.setattr(deferred_rank1, "LIMIT", 100)
    r = np.random.default_rng(7)
    args = (mat(r, (4, 4)) * 0.5, mat(r, (4, 3)), mat(r, (9, 3)), mat(r, 4))
    text = generated(rnn_batched, *(a.copy() for a in args))
    assert deferred(text) and "i64 100)" in text
    check_reverse(rnn_batched, *args)
