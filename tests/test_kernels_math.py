"""Gradient corpus: one kernel per math function / arithmetic instruction (see test_kernels.py).
"""
import math

import numpy as np
import pytest
from numba import njit

from enzyme_py import Const
from test_kernels_base import (A, D, U, Corpus, garbage, libm_cbrt, libm_exp, llvm_fma,
                               llvm_fmuladd, llvm_maxnum, llvm_minnum, run_case, separated)

corpus = Corpus()
case = corpus.case


# ---------------------------------------------------------------------------------------------
# Unary functions: map form y[i] = f(x[i]) (void, overwrites y) or reduce form
# return sum_i w[i] * f(x[i]).
# ---------------------------------------------------------------------------------------------

def _map_kernel(fj, name):
    def kernel(x, y):
        for i in range(x.shape[0]):
            y[i] = fj(x[i])
    kernel.__name__ = kernel.__qualname__ = "map_" + name
    return njit(kernel)


def _reduce_kernel(fj, name):
    def kernel(x, w):
        s = 0.0
        for i in range(x.shape[0]):
            s += w[i] * fj(x[i])
        return s
    kernel.__name__ = kernel.__qualname__ = "reduce_" + name
    return njit(kernel)


def unary(name, f, df, sample, covers, form="map", n=6, seed=1.0):
    fj = njit(f)
    if form == "map":
        def make(r):
            return [D(sample(r, n), r), D(garbage(r, n), r, 0.5, 1.5)]

        def analytic(v, s, seed):
            return {0: s[0] + s[1] * df(v[0]), 1: np.zeros(n)}
        case("map_" + name, _map_kernel(fj, name), make, analytic, covers=covers)
    else:
        def make(r):
            return [D(sample(r, n), r), Const(U(r, n, 0.5, 1.5))]

        def analytic(v, s, seed):
            return {0: s[0] + seed * v[1] * df(v[0])}
        case("reduce_" + name, _reduce_kernel(fj, name), make, analytic, seed=seed, covers=covers)


def uni(lo, hi):
    return lambda r, n: U(r, n, lo, hi)


def signed(lo, hi):
    return lambda r, n: A(r, n, lo, hi)


def _psi(x):
    from scipy.special import digamma
    return digamma(x)


LN2, LN10 = math.log(2.0), math.log(10.0)

unary("neg", lambda x: -x, lambda x: -np.ones_like(x), uni(-2, 2), {"fneg"})
unary("sin", lambda x: math.sin(x), np.cos, uni(-3, 3), {"llvm.sin"})
unary("cos", lambda x: math.cos(x), lambda x: -np.sin(x), uni(-3, 3), {"llvm.cos"}, form="reduce", seed=0.75)
unary("tan", lambda x: math.tan(x), lambda x: 1 + np.tan(x) ** 2, uni(-1.2, 1.2), {"tan"})
unary("exp", lambda x: math.exp(x), np.exp, uni(-2, 2), {"llvm.exp"}, form="reduce")
unary("exp2_pow", lambda x: 2.0 ** x, lambda x: LN2 * 2.0 ** x, uni(-3, 3), {"llvm.exp2"})
unary("log", lambda x: math.log(x), lambda x: 1 / x, uni(0.1, 5), {"llvm.log"})
unary("log2", lambda x: math.log2(x), lambda x: 1 / (x * LN2), uni(0.1, 5), {"log2"}, form="reduce")
unary("log10", lambda x: math.log10(x), lambda x: 1 / (x * LN10), uni(0.1, 5), {"llvm.log10"})
unary("sqrt", lambda x: math.sqrt(x), lambda x: 0.5 / np.sqrt(x), uni(0.1, 4), {"sqrt"})
unary("fabs", lambda x: abs(x), np.sign, signed(0.1, 2), {"llvm.fabs"})
unary("cube", lambda x: x ** 3, lambda x: 3 * x ** 2, uni(-2, 2), {"fmul"})
unary("tanh", lambda x: math.tanh(x), lambda x: 1 - np.tanh(x) ** 2, uni(-2, 2), {"tanh"})
unary("sinh", lambda x: math.sinh(x), np.cosh, uni(-2, 2), {"sinh"}, form="reduce")
unary("cosh", lambda x: math.cosh(x), np.sinh, uni(-2, 2), {"cosh"})
unary("asin", lambda x: math.asin(x), lambda x: 1 / np.sqrt(1 - x * x), uni(-0.9, 0.9), {"asin"},
      form="reduce")
unary("acos", lambda x: math.acos(x), lambda x: -1 / np.sqrt(1 - x * x), uni(-0.9, 0.9), {"acos"})
unary("atan", lambda x: math.atan(x), lambda x: 1 / (1 + x * x), uni(-3, 3), {"atan"}, form="reduce")
unary("asinh", lambda x: math.asinh(x), lambda x: 1 / np.sqrt(x * x + 1), uni(-3, 3), {"asinh"})
unary("acosh", lambda x: math.acosh(x), lambda x: 1 / np.sqrt(x * x - 1), uni(1.1, 4), {"acosh"},
      form="reduce")
unary("atanh", lambda x: math.atanh(x), lambda x: 1 / (1 - x * x), uni(-0.9, 0.9), {"atanh"})
unary("expm1", lambda x: math.expm1(x), np.exp, uni(-2, 2), {"expm1"}, form="reduce")
unary("log1p", lambda x: math.log1p(x), lambda x: 1 / (1 + x), uni(-0.5, 3), {"log1p"})
unary("np_cbrt", lambda x: np.cbrt(x), lambda x: 1 / (3 * np.cbrt(x) ** 2), signed(0.2, 3),
      {"llvm.pow", "fneg"}, form="reduce")
unary("libm_cbrt", lambda x: libm_cbrt(x), lambda x: 1 / (3 * np.cbrt(x) ** 2), signed(0.2, 3), {"cbrt"})
unary("libm_exp", lambda x: libm_exp(x), np.exp, uni(-2, 2), {"exp"}, form="reduce")
unary("erf", lambda x: math.erf(x), lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x), uni(-2, 2), {"erf"})
unary("erfc", lambda x: math.erfc(x), lambda x: -2 / math.sqrt(math.pi) * np.exp(-x * x), uni(-2, 2),
      {"erfc"},
      form="reduce")
unary("lgamma", lambda x: math.lgamma(x), _psi, uni(0.2, 5), {"lgamma"})
unary("lgamma_large", lambda x: math.lgamma(x), _psi, uni(5, 30), {"lgamma"}, form="reduce")


# ---------------------------------------------------------------------------------------------
# Binary / ternary functions: z[i] = f(x[i], y[i]) (void, overwrites z)
# ---------------------------------------------------------------------------------------------

def _binary_kernel(fj, name):
    def kernel(x, y, z):
        for i in range(x.shape[0]):
            z[i] = fj(x[i], y[i])
    kernel.__name__ = kernel.__qualname__ = "binary_" + name
    return njit(kernel)


def binary(name, f, dfx, dfy, sample, covers, n=6):
    """`sample(r, n)` returns the initial (x, y)."""
    def make(r):
        x, y = sample(r, n)
        return [D(x, r), D(y, r), D(garbage(r, n), r, 0.5, 1.5)]

    def analytic(v, s, seed):
        x, y = v[0], v[1]
        return {0: s[0] + s[2] * dfx(x, y), 1: s[1] + s[2] * dfy(x, y), 2: np.zeros(n)}
    case("binary_" + name, _binary_kernel(njit(f), name), make, analytic, covers=covers)


def pair(sx, sy):
    return lambda r, n: (sx(r, n), sy(r, n))


def quotient_pairs(r, n):
    """y away from 0 and x/y away from integers (fmod / % pick a branch)."""
    y = A(r, n, 0.5, 1.5)
    q = r.integers(-3, 4, n) + r.uniform(0.2, 0.8, n)
    return q * y, y


ONE = lambda x, y: np.ones_like(x)  # noqa: E731

binary("fadd", lambda x, y: x + y, ONE, ONE, pair(uni(-2, 2), uni(-2, 2)), {"fadd"})
binary("fsub", lambda x, y: x - y, ONE, lambda x, y: -np.ones_like(x), pair(uni(-2, 2), uni(-2, 2)), {"fsub"})
binary("fmul", lambda x, y: x * y, lambda x, y: y, lambda x, y: x, pair(uni(-2, 2), uni(-2, 2)), {"fmul"})
binary("fdiv", lambda x, y: x / y, lambda x, y: 1 / y, lambda x, y: -x / y ** 2,
       pair(uni(-2, 2), signed(0.3, 2)), {"fdiv"})
binary("pow", lambda x, y: x ** y, lambda x, y: y * x ** (y - 1), lambda x, y: x ** y * np.log(x),
       pair(uni(0.2, 3), uni(-2, 2)), {"llvm.pow"})
binary("atan2", lambda x, y: math.atan2(x, y), lambda x, y: y / (x * x + y * y),
       lambda x, y: -x / (x * x + y * y), pair(signed(0.2, 2), uni(-2, 2)), {"atan2"})
binary("hypot", lambda x, y: math.hypot(x, y), lambda x, y: x / np.hypot(x, y),
       lambda x, y: y / np.hypot(x, y), pair(uni(-2, 2), signed(0.2, 2)), {"hypot"})
binary("copysign", lambda x, y: math.copysign(x, y), lambda x, y: np.sign(x) * np.sign(y),
       lambda x, y: np.zeros_like(x), pair(signed(0.2, 2), signed(0.2, 2)), {"llvm.copysign"})
binary("np_fmod", lambda x, y: np.fmod(x, y), ONE, lambda x, y: -np.trunc(x / y), quotient_pairs, {"frem"})
binary("py_mod", lambda x, y: x % y, ONE, lambda x, y: -np.floor(x / y), quotient_pairs, {"frem", "fcmp"})
binary("min", lambda x, y: min(x, y), lambda x, y: (x < y) * 1.0, lambda x, y: (y < x) * 1.0,
       separated, {"select", "fcmp"})
binary("max", lambda x, y: max(x, y), lambda x, y: (x > y) * 1.0, lambda x, y: (y > x) * 1.0,
       separated, {"select", "fcmp"})
binary("minnum", lambda x, y: llvm_minnum(x, y), lambda x, y: (x < y) * 1.0,
       lambda x, y: (y < x) * 1.0, separated, {"llvm.minnum"})
binary("maxnum", lambda x, y: llvm_maxnum(x, y), lambda x, y: (x > y) * 1.0,
       lambda x, y: (y > x) * 1.0, separated, {"llvm.maxnum"})


def _ternary(name, fj, covers):
    @njit
    def kernel(x, y, b, z):
        for i in range(x.shape[0]):
            z[i] = fj(x[i], y[i], b[i]) * 0.5

    def make(r):
        return [D(U(r, 5, -2, 2), r), D(U(r, 5, -2, 2), r), D(U(r, 5, -2, 2), r),
                D(garbage(r, 5), r, 0.5, 1.5)]

    def analytic(v, s, seed):
        x, y, b = v[:3]
        dz = s[3] * 0.5
        return {0: s[0] + dz * y, 1: s[1] + dz * x, 2: s[2] + dz, 3: np.zeros(5)}
    case(name, kernel, make, analytic, covers=covers)


_ternary("fma", njit(lambda a, b, c: llvm_fma(a, b, c)), {"llvm.fma"})
_ternary("fmuladd", njit(lambda a, b, c: llvm_fmuladd(a, b, c)), {"llvm.fmuladd"})


@pytest.mark.parametrize("c", corpus.cases, ids=corpus.ids())
def test_kernel(c, monkeypatch):
    run_case(c, monkeypatch)
