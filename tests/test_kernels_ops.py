"""Gradient corpus: comparisons, select, rounding, int/float and float32/float64 conversions,
float32 kernels (see test_kernels.py).
"""
import math

import numpy as np
import pytest
from numba import njit

from enzyme_py import Active, Const
from test_kernels_base import D, U, Corpus, garbage, run_case, separated

corpus = Corpus()
case = corpus.case


# ---------------------------------------------------------------------------------------------
# Comparisons, select, zero-derivative rounding, int/float conversion, float casts
# ---------------------------------------------------------------------------------------------

@njit
def compare_all(x, y, z):
    for i in range(x.shape[0]):
        a = x[i]
        b = y[i]
        r = 0.0
        if a < b:
            r += a * b
        if a <= b:
            r += a
        if a > b:
            r += b * b
        if a >= b:
            r -= a * a
        if a == b:
            r += 100.0 * a
        if a != b:
            r += 2.0 * b
        z[i] = r


def _compare_all(v, s, seed):
    a, b = v[0], v[1]
    lt = a < b
    da = np.where(lt, b + 1, -2 * a)
    db = np.where(lt, a + 2, 2 * b + 2)
    return {0: s[0] + s[2] * da, 1: s[1] + s[2] * db, 2: np.zeros(a.shape)}


case("compare_all", compare_all,
     lambda r: (lambda x, y: [D(x, r), D(y, r), D(garbage(r, 8), r)])(*separated(r, 8)),
     _compare_all, covers={"fcmp"})


@njit
def select_expr(x, y):
    for i in range(x.shape[0]):
        v = x[i]
        y[i] = v * 2.0 if v > 0.3 else v * v


case("select_expr", select_expr,
     lambda r: [D(np.array([-1.2, -0.4, 0.1, 0.2, 0.5, 0.9, 1.7]), r), D(garbage(r, 7), r)],
     lambda v, s, seed: {0: s[0] + s[1] * np.where(v[0] > 0.3, 2.0, 2 * v[0]), 1: np.zeros(7)},
     covers={"select"})


@njit
def select_pick_array(x, y, z, t):
    for i in range(x.shape[0]):
        z[i] = x[i] * 3.0 if t[i] > 0 else y[i] - x[i]


case("select_pick_array", select_pick_array,
     lambda r: [D(U(r, 6, -1, 1), r), D(U(r, 6, -1, 1), r), D(garbage(r, 6), r),
                Const(np.array([1, -1, 1, 1, -1, -1]))],
     lambda v, s, seed: {0: s[0] + s[2] * np.where(v[3] > 0, 3.0, -1.0),
                         1: s[1] + s[2] * np.where(v[3] > 0, 0.0, 1.0), 2: np.zeros(6)})


@njit
def rounding(x, y):
    for i in range(x.shape[0]):
        v = x[i]
        y[i] = v * (np.floor(v) + np.ceil(2.0 * v) + np.trunc(v) + np.rint(v)) + math.floor(v) \
            + round(v * 3.0)


def _rounding_inputs(r, n):
    k = r.integers(-3, 4, n)
    f = r.choice([0.15, 0.28, 0.37, 0.62, 0.7, 0.81], n)
    return k + f


case("rounding_zero_derivative", rounding,
     lambda r: [D(_rounding_inputs(r, 8), r), D(garbage(r, 8), r)],
     lambda v, s, seed: {0: s[0] + s[1] * (np.floor(v[0]) + np.ceil(2 * v[0]) + np.trunc(v[0])
                                           + np.rint(v[0])), 1: np.zeros(8)},
     covers={"llvm.floor", "llvm.ceil", "llvm.trunc", "llvm.rint", "fptosi", "sitofp"})


@njit
def int_to_float(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * i + x[i] / (i + 1)


case("int_to_float", int_to_float, lambda r: [D(U(r, 6, -2, 2), r), D(garbage(r, 6), r)],
     lambda v, s, seed: {0: s[0] + s[1] * (np.arange(6) + 1.0 / np.arange(1, 7)), 1: np.zeros(6)},
     covers={"uitofp"})


# float32 <-> float64 casts inside a kernel. Inputs are k/64 and the step is 2**-12, so x +- h is
# exact in float32 and the (quadratic) kernels make the central difference exact.

def _k64(r, n):
    return r.integers(-60, 61, n) / 64.0


CAST_EPS = 2.0 ** -12


@njit
def cast_roundtrip(x, y):
    for i in range(x.shape[0]):
        y[i] = np.float64(np.float32(x[i])) * x[i]


case("cast_f64_f32_f64", cast_roundtrip, lambda r: [D(_k64(r, 6), r), D(garbage(r, 6), r)],
     lambda v, s, seed: {0: s[0] + s[1] * 2 * v[0], 1: np.zeros(6)}, eps=CAST_EPS,
     covers={"fptrunc", "fpext"})


@njit
def cast_fpext_sum(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.float64(x[i]) * np.float64(x[i]) * w[i]
    return s


case("cast_fpext_f32_in", cast_fpext_sum,
     lambda r: [D(_k64(r, 6).astype(np.float32), r), Const(U(r, 6, 0.5, 1.5))],
     lambda v, s, seed: {0: s[0] + seed * 2 * v[0].astype(np.float64) * v[1]}, eps=CAST_EPS,
     seed=1.25, covers={"fpext"})


@njit
def cast_fptrunc_out(x, y):
    for i in range(x.shape[0]):
        y[i] = np.float32(x[i] * 3.0)


case("cast_fptrunc_f32_out", cast_fptrunc_out,
     lambda r: [D(_k64(r, 6), r), D(garbage(r, 6, np.float32), r)],
     lambda v, s, seed: {0: s[0] + 3.0 * s[1], 1: np.zeros(6)}, eps=CAST_EPS, covers={"fptrunc"})


# ---------------------------------------------------------------------------------------------
# float32 kernels, checked against finite differences of the same kernel run in float64
# ---------------------------------------------------------------------------------------------

F32 = np.float32


@njit
def f32_sin_exp(x, y):
    for i in range(x.shape[0]):
        y[i] = math.sin(x[i]) * math.exp(0.5 * x[i])


case("f32_sin_exp", f32_sin_exp, lambda r: [D(U(r, 6, -2, 2, F32), r), D(garbage(r, 6, F32), r)],
     lambda v, s, seed: {0: s[0] + s[1] * np.exp(0.5 * v[0]) * (np.cos(v[0]) + 0.5 * np.sin(v[0])),
                         1: np.zeros(6)},
     fd_dtype=np.float64, covers={"llvm.sin", "llvm.exp", "fpext", "fptrunc"})


@njit
def f32_dot_active(a, x, y):
    s = x[0] * 0
    for i in range(x.shape[0]):
        s += a * x[i] * y[i]
    return s


case("f32_dot_active", f32_dot_active,
     lambda r: [Active(F32(0.7)), D(U(r, 7, -1, 1, F32), r), D(U(r, 7, -1, 1, F32), r)],
     lambda v, s, seed: {0: seed * float(np.dot(v[1].astype(float), v[2].astype(float))),
                         1: s[1] + seed * 0.7 * v[2], 2: s[2] + seed * 0.7 * v[1]},
     fd_dtype=np.float64, seed=1.5)


@njit
def f32_libm(x, y):
    for i in range(x.shape[0]):
        y[i] = math.tanh(x[i]) + math.log1p(x[i] * x[i]) + math.atan(x[i])


case("f32_libm_tanh_log1p_atan", f32_libm,
     lambda r: [D(U(r, 6, -2, 2, F32), r), D(garbage(r, 6, F32), r)],
     lambda v, s, seed: {0: s[0] + s[1] * (1 - np.tanh(v[0]) ** 2 + 2 * v[0] / (1 + v[0] ** 2)
                                           + 1 / (1 + v[0] ** 2)), 1: np.zeros(6)},
     fd_dtype=np.float64, covers={"tanhf", "log1pf", "atanf"})


@njit
def f32_pow_sqrt(x, y, z):
    for i in range(x.shape[0]):
        z[i] = x[i] ** y[i] + math.sqrt(x[i])


case("f32_pow_sqrt", f32_pow_sqrt,
     lambda r: [D(U(r, 5, 0.3, 2, F32), r), D(U(r, 5, -1.5, 1.5, F32), r), D(garbage(r, 5, F32), r)],
     None, fd_dtype=np.float64, covers={"sqrtf", "llvm.pow"})


@njit
def f32_colsum_sq(a, out):
    for j in range(a.shape[1]):
        s = a[0, j] * 0
        for i in range(a.shape[0]):
            s += a[i, j] * a[i, j]
        out[j] = s


case("f32_2d_F_colsum_sq", f32_colsum_sq,
     lambda r: [D(U(r, (4, 3), -1, 1, F32, order="F"), r), D(garbage(r, 3, F32), r)],
     lambda v, s, seed: {0: s[0] + 2 * v[0] * s[1][None, :], 1: np.zeros(3)},
     fd_dtype=np.float64)


@njit
def f32_mixed_precision(x, y):
    acc = 0.0  # float64 accumulator over float32 data: fpext, then fptrunc on store
    for i in range(x.shape[0]):
        acc += x[i] * x[i]
        y[i] = acc


case("f32_mixed_precision_prefix", f32_mixed_precision,
     lambda r: [D(U(r, 6, -1, 1, F32), r), D(garbage(r, 6, F32), r)],
     lambda v, s, seed: {0: s[0] + 2 * v[0] * np.cumsum(s[1][::-1])[::-1], 1: np.zeros(6)},
     fd_dtype=np.float64)


@pytest.mark.parametrize("c", corpus.cases, ids=corpus.ids())
def test_kernel(c, monkeypatch):
    run_case(c, monkeypatch)
