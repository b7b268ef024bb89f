"""Loads of a loop-filled temporary are recomputed from the stored expression before AD
(ir_passes/transforms/prepare/forward_stores.py; golden test tests/filecheck/forward-stores/).

GMM's pattern: for every point and component, `xc[j] = x[i, j] - m[k, j]` in one loop, read in
the next. Later iterations overwrite `xc`, so without forwarding the reverse sweep tapes every
read of it. Gradients are checked against finite differences and the analytic chain; the tape
shrinks by exactly the forwarded reads.
"""
import math

import numpy as np
import pytest
from numba import njit

import enzyme_py
import ir_passes.transforms.prepare.pipeline as prepare    # the reverse pipeline's steps call it
from enzyme_py import Const, Duplicated, autodiff, explain
from enzyme_py.check import check_gradient


@njit
def quad(x, m, D):
    n, d = x.shape
    K = m.shape[0]
    xc = np.empty(d)
    total = 0.0
    for i in range(n):
        for k in range(K):
            for j in range(d):
                xc[j] = x[i, j] - m[k, j]
            for j in range(d):
                total += D[k, j] * xc[j] * xc[j]
    return total


@njit
def quad_reversed(x, m, D):
    """Reads xc[d - 1 - j]: not an index from 0 by 1, so not forwarded."""
    n, d = x.shape
    K = m.shape[0]
    xc = np.empty(d)
    total = 0.0
    for i in range(n):
        for k in range(K):
            for j in range(d):
                xc[j] = x[i, j] - m[k, j]
            for j in range(d):
                total += D[k, j] * xc[d - 1 - j] * xc[j]
    return total


@njit
def quad_written_input(x, m, D):
    """m changes after xc is filled: the stored expression no longer holds, not forwarded."""
    n, d = x.shape
    K = m.shape[0]
    xc = np.empty(d)
    total = 0.0
    for i in range(n):
        for k in range(K):
            for j in range(d):
                xc[j] = x[i, j] - m[k, j]
            m[k, 0] *= 0.5
            for j in range(d):
                total += D[k, j] * xc[j] * xc[j]
    return total


def data(n=7, K=3, d=4):
    rng = np.random.default_rng(2)
    return rng.standard_normal((n, d)), rng.standard_normal((K, d)), rng.uniform(0.5, 2.0, (K, d))


def tape_bytes(kernel, x, m, D):
    return explain(kernel, Const(x), Duplicated(m.copy(), np.zeros_like(m)),
                   Duplicated(D, np.zeros_like(D))).tape_bytes


@pytest.fixture
def without_forwarding(monkeypatch):
    monkeypatch.setattr(prepare, "forward_loop_stores", lambda fn, noalias=False: 0)
    enzyme_py.clear_cache()
    yield
    enzyme_py.clear_cache()


def test_forwarded_gradient_is_right():
    x, m, D = data()
    dm, dD = np.zeros_like(m), np.zeros_like(D)
    autodiff(quad, Const(x), Duplicated(m, dm), Duplicated(D, dD))
    diff = x[:, None, :] - m[None, :, :]                       # (n, K, d)
    np.testing.assert_allclose(dD, (diff ** 2).sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(dm, (-2.0 * D[None] * diff).sum(axis=0), rtol=1e-12)
    assert check_gradient(quad, Const(x), Duplicated(m, np.zeros_like(m)),
                          Duplicated(D, np.zeros_like(D))).passed


@pytest.mark.parametrize("kernel", [quad_reversed, quad_written_input])
def test_what_is_not_forwarded_stays_right(kernel):
    x, m, D = data()
    assert check_gradient(kernel, Const(x), Duplicated(m, np.zeros_like(m)),
                          Duplicated(D, np.zeros_like(D))).passed


def test_the_tape_loses_the_forwarded_reads(request):
    x, m, D = data()
    n, d = x.shape
    K = m.shape[0]
    forwarded = tape_bytes(quad, x, m, D)
    request.getfixturevalue("without_forwarding")
    taped = tape_bytes(quad, x, m, D)
    assert taped - forwarded == n * K * d * 2 * 8      # two reads of xc[j], 8 bytes each


def test_only_the_reads_at_the_fill_index_are_forwarded(request):
    x, m, D = data()
    n, d = x.shape
    K = m.shape[0]
    reversed_kept = tape_bytes(quad_reversed, x, m, D)
    written_kept = tape_bytes(quad_written_input, x, m, D)
    request.getfixturevalue("without_forwarding")
    # xc[j] is forwarded, xc[d - 1 - j] stays on the tape
    assert tape_bytes(quad_reversed, x, m, D) - reversed_kept == n * K * d * 8
    assert tape_bytes(quad_written_input, x, m, D) == written_kept


# ---- more shapes: forwarded or not, the gradient is right ------------------------------------

@njit
def triangular(x, m):
    """GMM's hoisted xc[i] in a triangular loop: forwarded (the outer index runs 0..d-1)."""
    n, d = x.shape
    xc = np.empty(d)
    total = 0.0
    for i in range(n):
        for j in range(d):
            xc[j] = x[i, j] * m[j]
        for a in range(d):
            for b in range(a + 1, d):
                total += xc[a] * m[b]
    return total


@njit
def fill_with_break(x, m):
    """The fill loop may stop early: not an exact trip count, not forwarded."""
    n, d = x.shape
    xc = np.zeros(d)
    total = 0.0
    for i in range(n):
        for j in range(d):
            if x[i, j] > 1.5:
                break
            xc[j] = x[i, j] * m[j]
        for j in range(d):
            total += xc[j] * xc[j]
    return total


@njit
def conditional_fill(x, m):
    """The store does not run in every iteration: not forwarded."""
    n, d = x.shape
    xc = np.zeros(d)
    total = 0.0
    for i in range(n):
        for j in range(d):
            if x[i, j] > 0.0:
                xc[j] = x[i, j] * m[j]
        for j in range(d):
            total += xc[j] * m[j]
    return total


@njit
def shorter_reader(x, m):
    """The reader starts at 1: its index is not the filler's from 0, not forwarded."""
    n, d = x.shape
    xc = np.empty(d)
    total = 0.0
    for i in range(n):
        for j in range(d):
            xc[j] = math.sin(x[i, j]) * m[j]
        for j in range(1, d):
            total += xc[j] * xc[j - 1]
    return total


@njit
def pure_call_fill(x, m):
    """The stored expression calls a math intrinsic: forwarded."""
    n, d = x.shape
    xc = np.empty(d)
    total = 0.0
    for i in range(n):
        for j in range(d):
            xc[j] = math.exp(x[i, j] - m[j])
        for j in range(d):
            total += xc[j] * m[j]
    return total


@pytest.mark.parametrize("kernel, forwarded", [
    (triangular, True), (fill_with_break, False), (conditional_fill, False),
    (shorter_reader, False), (pure_call_fill, True)])
def test_shapes(kernel, forwarded, monkeypatch):
    counts = []
    real = prepare.forward_loop_stores

    def counting(fn, noalias=False):
        counts.append(real(fn, noalias))
        return counts[-1]
    monkeypatch.setattr(prepare, "forward_loop_stores", counting)
    enzyme_py.clear_cache()
    rng = np.random.default_rng(4)
    x, m = rng.standard_normal((5, 4)), rng.uniform(0.5, 1.5, 4)
    report = check_gradient(kernel, Const(x), Duplicated(m, np.zeros_like(m)))
    assert report.passed, report
    assert (sum(counts) > 0) == forwarded
