"""Gradient corpus: 2-D (C and F order) and 3-D arrays, strided and reversed views, in-place
updates, accumulation, gathers/scatters, several outputs (see test_kernels.py).
"""
import math

import numpy as np
import pytest
from numba import njit

from enzyme_py import Active, Const, Duplicated, DuplicatedNoNeed
from test_kernels_base import D, U, Corpus, garbage, run_case

corpus = Corpus()
case = corpus.case


# ---------------------------------------------------------------------------------------------
# Arrays: layouts, views, overwrite / accumulate semantics, several outputs
# ---------------------------------------------------------------------------------------------

@njit
def matvec(a, x, y):
    for i in range(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j] * x[j]
        y[i] = s


case("nested_matvec_2d_C", matvec,
     lambda r: [D(U(r, (3, 4), -1, 1), r), D(U(r, 4, -1, 1), r), D(garbage(r, 3), r)],
     lambda v, s, seed: {0: s[0] + np.outer(s[2], v[1]), 1: s[1] + v[0].T @ s[2], 2: np.zeros(3)})


@njit
def colnorm2(a, out):
    for j in range(a.shape[1]):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i, j] * a[i, j]
        out[j] = s


case("nested_2d_F_colnorm", colnorm2,
     lambda r: [D(U(r, (4, 3), -1, 1, order="F"), r), D(garbage(r, 3), r)],
     lambda v, s, seed: {0: s[0] + 2 * v[0] * s[1][None, :], 1: np.zeros(3)})


@njit
def matmul(a, b, c):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = 0.0
            for k in range(a.shape[1]):
                s += a[i, k] * b[k, j]
            c[i, j] = s


case("matmul_C_times_F", matmul,
     lambda r: [D(U(r, (2, 3), -1, 1), r), D(U(r, (3, 4), -1, 1, order="F"), r),
                D(garbage(r, (2, 4)), r)],
     lambda v, s, seed: {0: s[0] + s[2] @ v[1].T, 1: s[1] + v[0].T @ s[2], 2: np.zeros((2, 4))})


@njit
def quad_form(a, x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            s += x[i] * a[i, j] * x[j]
    return s


case("quadratic_form_return", quad_form,
     lambda r: [D(U(r, (4, 4), -1, 1), r), D(U(r, 4, -1, 1), r)],
     lambda v, s, seed: {0: s[0] + seed * np.outer(v[1], v[1]), 1: s[1] + seed * (v[0] + v[0].T) @ v[1]},
     seed=0.5)


@njit
def tensor3(a, w):
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            for k in range(a.shape[2]):
                s += a[i, j, k] * a[i, j, k] * w[k]
    return s


case("tensor_3d_return", tensor3, lambda r: [D(U(r, (2, 3, 4), -1, 1), r), Const(U(r, 4, 0.5, 1.5))],
     lambda v, s, seed: {0: s[0] + seed * 2 * v[0] * v[1]})


@njit
def contract3(a, b, out):
    for i in range(a.shape[0]):
        for k in range(a.shape[2]):
            s = 0.0
            for j in range(a.shape[1]):
                s += a[i, j, k] * b[j]
            out[i, k] = math.sin(s)


def _contract3(v, s, seed):
    a, b = v[0], v[1]
    t = np.einsum("ijk,j->ik", a, b)
    g = s[2] * np.cos(t)
    return {0: s[0] + np.einsum("ik,j->ijk", g, b), 1: s[1] + np.einsum("ik,ijk->j", g, a),
            2: np.zeros(t.shape)}


case("tensor_3d_F_contract", contract3,
     lambda r: [D(U(r, (2, 3, 4), -1, 1, order="F"), r), D(U(r, 3, -1, 1), r), D(garbage(r, (2, 4)), r)],
     _contract3)


@njit
def axpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def _strided_axpy_args(r):
    xb = U(r, 12, -1, 1)
    dxb = U(r, 12, -1, 1)
    yb = U(r, 18, -1, 1)
    dyb = U(r, 18, -1, 1)
    return [Active(0.8), Duplicated(xb[::2], dxb[::2]), Duplicated(yb[::3], dyb[::3])]


case("strided_views_axpy", axpy, _strided_axpy_args,
     lambda v, s, seed: {0: float(np.dot(s[2], v[1])), 1: s[1] + 0.8 * s[2], 2: s[2]})


@njit
def prefix_square(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
        y[i] = s * s


def _reversed_args(r):
    xb, dxb = U(r, 6, -1, 1), U(r, 6, -1, 1)
    return [Duplicated(xb[::-1], dxb[::-1]), D(garbage(r, 6), r)]


def _prefix_square(v, s, seed):
    S = np.cumsum(v[0])
    g = 2 * S * s[1]
    return {0: s[0] + np.cumsum(g[::-1])[::-1], 1: np.zeros(6)}


case("negative_stride_prefix", prefix_square, _reversed_args, _prefix_square)


@njit
def strided_2d(a, out):
    for i in range(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += math.cos(a[i, j])
        out[i] = s


def _strided_2d_args(r):
    base, dbase = U(r, (6, 8), -2, 2), U(r, (6, 8), -1, 1)
    return [Duplicated(base[1::2, ::3], dbase[1::2, ::3]), D(garbage(r, 3), r)]


case("strided_2d_view", strided_2d, _strided_2d_args,
     lambda v, s, seed: {0: s[0] - np.sin(v[0]) * s[1][:, None], 1: np.zeros(3)})


@njit
def inplace_update(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * x[i] + 0.5 * x[i]


case("inplace_overwrite_input", inplace_update, lambda r: [D(U(r, 6, -1, 1), r)],
     lambda v, s, seed: {0: s[0] * (2 * v[0] + 0.5)})


@njit
def accumulate_out(x, y, c):
    for i in range(x.shape[0]):
        y[i] += c * x[i] * x[i]


case("accumulate_into_output", accumulate_out,
     lambda r: [D(U(r, 6, -1, 1), r), D(U(r, 6, -1, 1), r), 1.7],
     lambda v, s, seed: {0: s[0] + 1.7 * 2 * v[0] * s[1], 1: s[1]})


@njit
def overwrite_twice(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i]
        y[i] = y[i] * y[i] + 1.0


case("overwrite_then_reread", overwrite_twice, lambda r: [D(U(r, 6, -1, 1), r), D(garbage(r, 6), r)],
     lambda v, s, seed: {0: s[0] + 2 * v[0] * s[1], 1: np.zeros(6)})


@njit
def partial_write(x, y):
    for i in range(0, x.shape[0], 2):
        y[i] = math.exp(x[i])


def _partial_write(v, s, seed):
    dx, dy = s[0].copy(), s[1].copy()
    dx[::2] += s[1][::2] * np.exp(v[0][::2])
    dy[::2] = 0
    return {0: dx, 1: dy}


case("partial_overwrite", partial_write, lambda r: [D(U(r, 7, -1, 1), r), D(garbage(r, 7), r)],
     _partial_write)


@njit
def two_outputs(x, y, z):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i]
        z[i] = y[i] * x[i]


case("two_outputs_reread", two_outputs,
     lambda r: [D(U(r, 5, -1, 1), r), D(garbage(r, 5), r), D(garbage(r, 5), r)],
     lambda v, s, seed: {0: s[0] + 2 * v[0] * s[1] + 3 * v[0] ** 2 * s[2], 1: np.zeros(5), 2: np.zeros(5)})


@njit
def row_norms(a, out):
    for i in range(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j] * a[i, j]
        out[i] = math.sqrt(s)


def _row_norms(v, s, seed):
    a = v[0]
    nrm = np.sqrt(np.sum(a * a, axis=1))
    return {0: s[0] + a / nrm[:, None] * s[1][:, None], 1: np.zeros(a.shape[0])}


case("row_norms", row_norms, lambda r: [D(U(r, (3, 4), -1, 1), r), D(garbage(r, 3), r)], _row_norms)


@njit
def stencil(x, y):
    for i in range(1, x.shape[0] - 1):
        d = x[i - 1] - 2.0 * x[i] + x[i + 1]
        y[i] = d * d


def _stencil(v, s, seed):
    x = v[0]
    n = x.shape[0]
    dx, dy = s[0].copy(), s[1].copy()
    for i in range(1, n - 1):
        d = x[i - 1] - 2 * x[i] + x[i + 1]
        g = 2 * d * s[1][i]
        dx[i - 1] += g
        dx[i] -= 2 * g
        dx[i + 1] += g
        dy[i] = 0
    return {0: dx, 1: dy}


case("stencil_edges_untouched", stencil, lambda r: [D(U(r, 7, -1, 1), r), D(garbage(r, 7), r)], _stencil)


@njit
def _helper(a, b):
    return a * a + math.sin(b)


@njit
def calls_helper(x, y, z):
    for i in range(x.shape[0]):
        z[i] = _helper(x[i], y[i]) * _helper(y[i], x[i])


def _calls_helper(v, s, seed):
    x, y = v[0], v[1]
    f, g = x * x + np.sin(y), y * y + np.sin(x)
    return {0: s[0] + s[2] * (2 * x * g + f * np.cos(x)), 1: s[1] + s[2] * (np.cos(y) * g + f * 2 * y),
            2: np.zeros(x.shape)}


case("calls_njit_helper", calls_helper,
     lambda r: [D(U(r, 5, -1, 1), r), D(U(r, 5, -1, 1), r), D(garbage(r, 5), r)], _calls_helper)


@njit
def gather(x, idx, y, w):
    for i in range(idx.shape[0]):
        y[i] = x[idx[i]] * w


def _gather(v, s, seed):
    dx = s[0].copy()
    np.add.at(dx, v[1], s[2] * 1.5)
    return {0: dx, 2: np.zeros(v[1].shape)}


case("gather_repeated_index", gather,
     lambda r: [D(U(r, 5, -1, 1), r), Const(np.array([0, 3, 3, 1, 0, 4])), D(garbage(r, 6), r), 1.5],
     _gather)


@njit
def scatter_add(x, idx, y):
    for i in range(idx.shape[0]):
        y[idx[i]] += x[i] * x[i]


def _scatter_add(v, s, seed):
    return {0: s[0] + 2 * v[0] * s[2][v[1]], 2: s[2]}


case("scatter_add_repeated_index", scatter_add,
     lambda r: [D(U(r, 6, -1, 1), r), Const(np.array([0, 2, 2, 1, 0, 2])), D(U(r, 3, -1, 1), r)],
     _scatter_add)


@njit
def dup_noneed(x, y):
    for i in range(x.shape[0]):
        y[i] = math.log(1.0 + x[i] * x[i])


def _dup_noneed_args(r):
    y = garbage(r, 5)
    return [D(U(r, 5, -2, 2), r), DuplicatedNoNeed(y, U(r, 5, -1, 1))]


case("duplicated_noneed_output", dup_noneed, _dup_noneed_args,
     lambda v, s, seed: {0: s[0] + s[1] * 2 * v[0] / (1 + v[0] ** 2), 1: np.zeros(5)})


@njit
def normalize(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    inv = 1.0 / math.sqrt(s)
    for i in range(x.shape[0]):
        y[i] = x[i] * inv


def _normalize(v, s, seed):
    x = v[0]
    n = np.linalg.norm(x)
    J = np.eye(x.shape[0]) / n - np.outer(x, x) / n ** 3
    return {0: s[0] + J.T @ s[1], 1: np.zeros(x.shape)}


case("normalize_two_loops", normalize, lambda r: [D(U(r, 5, -1, 1), r), D(garbage(r, 5), r)], _normalize)


@njit
def sigmoid_net(w, b, x, out):
    # one dense layer + sigmoid, then summed: nested loops with a libm-free activation
    s = 0.0
    for i in range(w.shape[0]):
        z = b[i]
        for j in range(w.shape[1]):
            z += w[i, j] * x[j]
        s += 1.0 / (1.0 + math.exp(-z))
    out[0] = s
    return s * 0.5


def _sigmoid_net(v, s, seed):
    w, b, x = v[0], v[1], v[2]
    z = w @ x + b
    sg = 1 / (1 + np.exp(-z))
    g = sg * (1 - sg) * (s[3][0] + 0.5 * seed)
    return {0: s[0] + np.outer(g, x), 1: s[1] + g, 2: s[2] + w.T @ g, 3: np.zeros(1)}


case("dense_sigmoid_return_and_output", sigmoid_net,
     lambda r: [D(U(r, (3, 4), -1, 1), r), D(U(r, 3, -1, 1), r), D(U(r, 4, -1, 1), r), D(garbage(r, 1), r)],
     _sigmoid_net, seed=1.2)


@pytest.mark.parametrize("c", corpus.cases, ids=corpus.ids())
def test_kernel(c, monkeypatch):
    run_case(c, monkeypatch)
