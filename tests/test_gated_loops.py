"""Gated loops (ir_passes/transforms/reverse/loops/gated.py): the reverse of a loop whose adjoints
leave only through one arm of a select runs only where the select took that arm. The gradients
and Hessian-vector products of nearest-centroid searches, against analytic values and central
differences, for both arms, an active initial value, a non-chosen row holding inf, and a
loop that writes memory (not gated)."""
import numpy as np
import pytest
from numba import njit

import enzyme_py
from enzyme_py import Const, Duplicated


@njit
def nearest(centroids, points):
    total = 0.0
    k, d = centroids.shape
    for i in range(points.shape[0]):
        best = np.inf
        for c in range(k):
            s = 0.0
            for j in range(d):
                t = points[i, j] - centroids[c, j]
                s += t * t
            best = min(best, s)
        total += best
    return total


@njit
def nearest_kept_arm(centroids, points):
    """best = best if best <= s else s: the distance is the select's false arm."""
    total = 0.0
    k, d = centroids.shape
    for i in range(points.shape[0]):
        best = np.inf
        for c in range(k):
            s = 0.0
            for j in range(d):
                t = points[i, j] - centroids[c, j]
                s += t * t
            best = best if best <= s else s
        total += best
    return total


@njit
def farthest_offset(centroids, points, w):
    """The distance loop starts from w[c] (an active initial value) and max picks it."""
    total = 0.0
    k, d = centroids.shape
    for i in range(points.shape[0]):
        best = -np.inf
        for c in range(k):
            s = w[c]
            for j in range(d):
                t = points[i, j] - centroids[c, j]
                s += t * t
            best = max(best, s)
        total += best
    return total


@njit
def nearest_logged(centroids, points, log):
    """The distance loop writes memory: its reverse runs every time."""
    total = 0.0
    k, d = centroids.shape
    for i in range(points.shape[0]):
        best = np.inf
        for c in range(k):
            s = 0.0
            for j in range(d):
                t = points[i, j] - centroids[c, j]
                s += t * t
                log[c] = s
            best = min(best, s)
        total += best
    return total


def data(k=4, n=30, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((k, d)), rng.random((n, d))


def assignment(centroids, points, pick=np.argmin, offset=0.0):
    return pick(((points[:, None, :] - centroids[None]) ** 2).sum(-1) + offset, axis=1)


def analytic(centroids, points, owner):
    g = np.zeros_like(centroids)
    count = np.zeros(len(centroids))
    for p, c in zip(points, owner):
        g[c] -= 2 * (p - centroids[c])
        count[c] += 1
    return g, 2 * count[:, None] * np.ones_like(centroids)


@pytest.mark.parametrize("kernel", [nearest, nearest_kept_arm])
def test_gradient_and_hessian_diagonal(kernel):
    c, p = data()
    g, hdiag = analytic(c, p, assignment(c, p))
    np.testing.assert_allclose(enzyme_py.gradient(kernel, c, p), g, rtol=1e-12, atol=1e-12)
    assert enzyme_py.check_gradient(kernel, Duplicated(c, np.zeros_like(c)), Const(p))
    v = np.random.default_rng(1).random(c.shape)
    np.testing.assert_allclose(enzyme_py.hessian_vector_product(kernel, c, v, p), hdiag * v,
                               rtol=1e-12, atol=1e-12)


def test_active_initial_value_gets_its_adjoint_only_where_chosen():
    c, p = data(seed=2)
    w = np.random.default_rng(3).random(len(c))
    owner = assignment(c, p, np.argmax, w)
    dw = np.zeros_like(w)
    enzyme_py.autodiff(farthest_offset, Duplicated(c, np.zeros_like(c)), Const(p), Duplicated(w, dw))
    np.testing.assert_array_equal(dw, np.bincount(owner, minlength=len(w)).astype(float))
    assert enzyme_py.check_gradient(farthest_offset, Duplicated(c, np.zeros_like(c)), Const(p),
                             Duplicated(w, np.zeros_like(w)))


def test_row_holding_inf_that_is_never_nearest():
    c, p = data(k=5, seed=4)
    c[3] = [np.inf, 0.0, 0.0]         # its distance is inf: never chosen
    g, hdiag = analytic(c, p, assignment(c, p))
    got = enzyme_py.gradient(nearest, c, p)
    np.testing.assert_array_equal(got[3], 0.0)
    np.testing.assert_allclose(got, g, rtol=1e-12, atol=1e-12)
    v = np.ones_like(c)
    np.testing.assert_allclose(enzyme_py.hessian_vector_product(nearest, c, v, p), hdiag,
                               rtol=1e-12, atol=1e-12)


def test_loop_that_writes_memory_is_reversed_in_full():
    c, p = data(seed=5)
    log = np.zeros(len(c))
    assert enzyme_py.check_gradient(nearest_logged, Duplicated(c, np.zeros_like(c)), Const(p),
                             Duplicated(log, np.random.default_rng(6).random(len(c))))


@njit
def nearest_weights_overwritten(centroids, points, w):
    """The gated loop reads w, which the outer loop overwrites after it: the reverse of the
    gated loop reads w's old values from the tape, so a skipped reverse must leave the tape's
    position where the next reversed loop expects it."""
    total = 0.0
    k, d = centroids.shape
    for i in range(points.shape[0]):
        best = np.inf
        for c in range(k):
            s = 0.0
            for j in range(d):
                t = points[i, j] - centroids[c, j]
                s += t * t * w[j]
            best = min(best, s)
        total += np.sqrt(best)
        w[i % d] *= 1.1
    return total


def test_skipped_reverse_keeps_the_tape_in_step():
    r = np.random.default_rng(5)
    C, P, w = r.normal(size=(5, 3)), r.normal(size=(7, 3)), r.uniform(0.5, 1.5, 3)
    assert enzyme_py.check_gradient(nearest_weights_overwritten, Duplicated(C, np.zeros_like(C)),
                             Duplicated(P, np.zeros_like(P)), Duplicated(w, np.zeros_like(w)))
