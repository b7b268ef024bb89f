"""Table-driven gradient corpus: small @njit kernels checked against central finite differences.

Every case is a kernel plus a builder of its (annotated) arguments from a fixed random
generator. Inputs stay inside each function's domain and away from branch boundaries, so the
finite difference of the plain kernel is a trustworthy reference.

`test_kernel[case]` (one test per case, so each kernel compiles in one xdist worker):

1. without the AD: the kernel's optimised IR contains the instructions / calls the case claims
   to cover; the finite-difference reference (`enzyme_py.check.finite_difference`, plain
   kernel only) agrees with the hand-written derivative where the case has one; and
   check_gradient, with autodiff faked, accepts that derivative and rejects it perturbed;
2. `check_gradient`: autodiff vs finite differences (rtol 1e-6 for float64; float32 kernels
   are checked against finite differences of the same kernel run in float64), and the AD
   result against the hand-written derivative where there is one.

`test_rules_covered`: the cases together claim every instruction, intrinsic and libm call that
has a derivative rule (each claim is checked against the IR in step 1).

Semantics (see README): L = sum_k <shadow_k as given, final array k> + seed * return value;
shadows leave holding dL/d(initial value).
"""
import math
import re
import zlib

import numpy as np
import pytest
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

import enzyme_py.api
from enzyme_py import Active, Const, Duplicated, DuplicatedNoNeed, check_gradient
from enzyme_py.check import _clone, finite_difference

# ---------------------------------------------------------------------------------------------
# LLVM intrinsics Numba does not emit on its own from Python code (fma, fmuladd, minnum, maxnum)
# ---------------------------------------------------------------------------------------------


def _llvm_float_intrinsic(name, nargs):
    def typer(typingctx, *tys):
        if len(tys) != nargs or len(set(tys)) != 1 or not isinstance(tys[0], types.Float):
            return None
        ty = tys[0]

        def codegen(context, builder, signature, args):
            lty = context.get_value_type(ty)
            full = "%s.%s" % (name, "f64" if lty == ir.DoubleType() else "f32")
            fn = builder.module.globals.get(full)
            if fn is None:
                fn = ir.Function(builder.module, ir.FunctionType(lty, [lty] * nargs), name=full)
            return builder.call(fn, args)
        return ty(*tys), codegen
    return typer


@intrinsic
def llvm_fma(typingctx, a, b, c):
    return _llvm_float_intrinsic("llvm.fma", 3)(typingctx, a, b, c)


@intrinsic
def llvm_fmuladd(typingctx, a, b, c):
    return _llvm_float_intrinsic("llvm.fmuladd", 3)(typingctx, a, b, c)


@intrinsic
def llvm_minnum(typingctx, a, b):
    return _llvm_float_intrinsic("llvm.minnum", 2)(typingctx, a, b)


@intrinsic
def llvm_maxnum(typingctx, a, b):
    return _llvm_float_intrinsic("llvm.maxnum", 2)(typingctx, a, b)


# libm functions called directly (Numba itself lowers np.cbrt and math.exp differently).
libm_cbrt = types.ExternalFunction("cbrt", types.float64(types.float64))
libm_exp = types.ExternalFunction("exp", types.float64(types.float64))


# ---------------------------------------------------------------------------------------------
# The case table
# ---------------------------------------------------------------------------------------------

class Case:
    """One kernel + argument builder (+ optional hand-written derivative).

    `make(r)` returns the argument list (annotated) from generator `r`; `analytic(v, s, seed)`
    gets the initial primal values `v` and shadows `s` (None where there is none) and returns
    {arg index: expected derivative}. `covers`: instructions / called functions (suffix .f32/.f64
    dropped) that the kernel's optimised IR must contain: the derivative rules it exercises.
    """

    def __init__(self, name, kernel, make, analytic=None, seed=1.0, eps=None, fd_dtype=None,
                 rtol=1e-6, covers=()):
        self.name, self.kernel, self.make, self.analytic = name, kernel, make, analytic
        self.seed, self.eps, self.fd_dtype, self.rtol = seed, eps, fd_dtype, rtol
        self.covers = set(covers)

    def args(self):
        return self.make(np.random.default_rng(zlib.crc32(self.name.encode())))

    def __repr__(self):
        return self.name


CASES = []


def case(name, kernel, make, analytic=None, **kw):
    assert name not in {c.name for c in CASES}, name
    CASES.append(Case(name, kernel, make, analytic, **kw))


# argument helpers ------------------------------------------------------------------------------

def U(r, shape, lo, hi, dtype=np.float64, order="C"):
    """Uniform values in [lo, hi)."""
    return np.asarray(r.uniform(lo, hi, shape), dtype=dtype, order=order)


def A(r, shape, lo, hi, dtype=np.float64):
    """Magnitudes in [lo, hi) with random signs (keeps away from 0)."""
    return (r.uniform(lo, hi, shape) * r.choice([-1.0, 1.0], shape)).astype(dtype)


def D(a, r, lo=-1.0, hi=1.0):
    """Duplicated(a, shadow) with the shadow laid out exactly like a, holding random seeds."""
    s = _clone(a, writeable=True)
    s[...] = r.uniform(lo, hi, a.shape)
    return Duplicated(a, s)


def garbage(r, shape, dtype=np.float64, order="C"):
    """Initial content of a fully overwritten output (irrelevant to the result)."""
    return U(r, shape, -9.0, 9.0, dtype, order)


def vals(args):
    return [getattr(a, "value", a) for a in args]


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
unary("asin", lambda x: math.asin(x), lambda x: 1 / np.sqrt(1 - x * x), uni(-0.9, 0.9), {"asin"}, form="reduce")
unary("acos", lambda x: math.acos(x), lambda x: -1 / np.sqrt(1 - x * x), uni(-0.9, 0.9), {"acos"})
unary("atan", lambda x: math.atan(x), lambda x: 1 / (1 + x * x), uni(-3, 3), {"atan"}, form="reduce")
unary("asinh", lambda x: math.asinh(x), lambda x: 1 / np.sqrt(x * x + 1), uni(-3, 3), {"asinh"})
unary("acosh", lambda x: math.acosh(x), lambda x: 1 / np.sqrt(x * x - 1), uni(1.1, 4), {"acosh"}, form="reduce")
unary("atanh", lambda x: math.atanh(x), lambda x: 1 / (1 - x * x), uni(-0.9, 0.9), {"atanh"})
unary("expm1", lambda x: math.expm1(x), np.exp, uni(-2, 2), {"expm1"}, form="reduce")
unary("log1p", lambda x: math.log1p(x), lambda x: 1 / (1 + x), uni(-0.5, 3), {"log1p"})
unary("np_cbrt", lambda x: np.cbrt(x), lambda x: 1 / (3 * np.cbrt(x) ** 2), signed(0.2, 3), {"llvm.pow"}, form="reduce")
unary("libm_cbrt", lambda x: libm_cbrt(x), lambda x: 1 / (3 * np.cbrt(x) ** 2), signed(0.2, 3), {"cbrt"})
unary("libm_exp", lambda x: libm_exp(x), np.exp, uni(-2, 2), {"exp"}, form="reduce")
unary("erf", lambda x: math.erf(x), lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x), uni(-2, 2), {"erf"})
unary("erfc", lambda x: math.erfc(x), lambda x: -2 / math.sqrt(math.pi) * np.exp(-x * x), uni(-2, 2), {"erfc"},
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


def separated(r, n):
    """x, y with |x - y| >= 0.1 (min/max pick a side)."""
    x = U(r, n, -2, 2)
    return x, x + A(r, n, 0.1, 1.0)


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
binary("min", lambda x, y: min(x, y), lambda x, y: (x < y) * 1.0, lambda x, y: (y < x) * 1.0, separated, {"select", "fcmp"})
binary("max", lambda x, y: max(x, y), lambda x, y: (x > y) * 1.0, lambda x, y: (y > x) * 1.0, separated, {"select", "fcmp"})
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


# ---------------------------------------------------------------------------------------------
# Structure: loops, early exits, branches, layouts, Active scalars, scalar returns
# ---------------------------------------------------------------------------------------------

@njit
def dot(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    return s


case("dot_return", dot, lambda r: [D(U(r, 8, -1, 1), r), D(U(r, 8, -1, 1), r)],
     lambda v, s, seed: {0: s[0] + seed * v[1], 1: s[1] + seed * v[0]}, seed=1.5)


@njit
def dynamic_trip(x, y, n):
    for i in range(n):
        y[i] = 0.5 * x[i] * x[i] + x[i]


def _dynamic_trip(v, s, seed):
    n = v[2]
    dx = s[0].copy()
    dx[:n] += s[1][:n] * (v[0][:n] + 1)
    dy = s[1].copy()
    dy[:n] = 0
    return {0: dx, 1: dy}


case("dynamic_trip_count", dynamic_trip, lambda r: [D(U(r, 8, -1, 1), r), D(garbage(r, 8), r), 5],
     _dynamic_trip)


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
def while_stride2(x, n):
    s = 0.0
    i = 0
    while i < n:
        s += 0.5 * x[i] * x[i]
        i += 2
    return s


def _while_stride2(v, s, seed):
    dx = s[0].copy()
    dx[0:v[1]:2] += seed * v[0][0:v[1]:2]
    return {0: dx}


case("while_loop", while_stride2, lambda r: [D(U(r, 9, -1, 1), r), 7], _while_stride2, seed=2.0)


@njit
def halve_until_small(a):
    k = 0
    while a > 1.0:
        a = a * 0.5
        k += 1
    return a * a + k


case("data_dependent_while_active", halve_until_small, lambda r: [Active(5.3)],
     lambda v, s, seed: {0: seed * 2 * (5.3 / 8) / 8})


@njit
def newton_sqrt(a):
    x = a
    for _ in range(60):
        xn = 0.5 * (x + a / x)
        if xn == x:
            break
        x = xn
    return x


case("newton_loop_break_active", newton_sqrt, lambda r: [Active(2.7)],
     lambda v, s, seed: {0: seed * 0.5 / math.sqrt(2.7)})


@njit
def sum_until(x, t):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > t:
            break
        s += x[i] * x[i]
    return s


def _sum_until(v, s, seed):
    dx = s[0].copy()
    dx[:4] += seed * 2 * v[0][:4]
    return {0: dx}


case("loop_break", sum_until,
     lambda r: [D(np.array([0.3, -0.5, 0.7, 0.1, 1.6, 0.2, 0.4]), r), 1.0], _sum_until)


@njit
def return_in_loop(x, w, lim):
    s = 0.0
    for i in range(x.shape[0]):
        s += w[i] * x[i]
        if s > lim:
            return 2.0 * s
    return s


def _return_in_loop(v, s, seed):
    dx = s[0].copy()
    dx[:4] += seed * 2.0 * v[1][:4]
    return {0: dx}


# partial sums of w*x: 0.5, 1.0, 1.5, 2.5 (> 2.2) -> returns at i = 3
case("return_inside_loop", return_in_loop,
     lambda r: [D(np.array([0.5, 1.0, 0.25, 2.0, 1.0, 3.0]), r),
                Const(np.array([1.0, 0.5, 2.0, 0.5, 1.0, 1.0])), 2.2],
     _return_in_loop)


@njit
def while_data_exit(x, target):
    s = 0.0
    i = 0
    while s < target and i < x.shape[0]:
        s += x[i] * x[i]
        i += 1
    return math.sqrt(s)


def _while_data_exit(v, s, seed):
    x = v[0]
    m = 3  # cumulative squares 0.64, 1.45, 2.54 >= 2.0
    tot = np.sum(x[:m] ** 2)
    dx = s[0].copy()
    dx[:m] += seed * x[:m] / math.sqrt(tot)
    return {0: dx}


case("data_dependent_while_exit", while_data_exit,
     lambda r: [D(np.array([0.8, -0.9, 1.044, 0.6, 0.7]), r), 2.0], _while_data_exit)


@njit
def piecewise(x, y):
    for i in range(x.shape[0]):
        v = x[i]
        if v < -0.5:
            y[i] = v * v
        elif v < 0.5:
            y[i] = math.sin(v)
        else:
            y[i] = math.exp(v)


def _piecewise(v, s, seed):
    x = v[0]
    d = np.where(x < -0.5, 2 * x, np.where(x < 0.5, np.cos(x), np.exp(x)))
    return {0: s[0] + s[1] * d, 1: np.zeros(x.shape)}


case("branches_if_elif_else", piecewise,
     lambda r: [D(np.array([-1.3, -0.8, -0.2, 0.1, 0.3, 0.8, 1.4]), r), D(garbage(r, 7), r)],
     _piecewise)


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
def active_mix(a, x, b, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] * x[i] + b / (1.0 + x[i] * x[i])


def _active_mix(v, s, seed):
    a, x, b = v[0], v[1], v[2]
    dy = s[3]
    return {0: float(np.sum(dy * x * x)), 2: float(np.sum(dy / (1 + x * x))),
            1: s[1] + dy * (2 * a * x - 2 * b * x / (1 + x * x) ** 2), 3: np.zeros(x.shape)}


case("active_scalars_with_arrays", active_mix,
     lambda r: [Active(1.3), D(U(r, 6, -1, 1), r), Active(-0.7), D(garbage(r, 6), r)], _active_mix)


@njit
def scalar_only(a, b, c):
    return a * math.exp(b) / (1.0 + c * c) + math.log(a) * b


def _scalar_only(v, s, seed):
    a, b, c = 1.3, 0.4, -0.6
    q = 1 + c * c
    return {0: seed * (math.exp(b) / q + b / a), 1: seed * (a * math.exp(b) / q + math.log(a)),
            2: seed * (-a * math.exp(b) * 2 * c / q ** 2)}


case("scalar_only_active", scalar_only, lambda r: [Active(1.3), Active(0.4), Active(-0.6)],
     _scalar_only, seed=0.8)


@njit
def scalar_mixed_const(a, n, c):
    s = 0.0
    for i in range(n):
        s += math.sin(a * (i + 1)) * c
    return s


case("scalar_loop_const_args", scalar_mixed_const, lambda r: [Active(0.3), 4, 1.5],
     lambda v, s, seed: {0: seed * sum(1.5 * (i + 1) * math.cos(0.3 * (i + 1)) for i in range(4))})


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
def recurrence(a, x, y):
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = a * y[i - 1] + x[i]


def _recurrence(v, s, seed):
    a, x = v[0], v[1]
    n = x.shape[0]
    y = np.zeros(n)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = a * y[i - 1] + x[i]
    # y[i] = sum_{j<=i} a^(i-j) x[j]
    J = np.array([[a ** (i - j) if j <= i else 0.0 for j in range(n)] for i in range(n)])
    dJ = np.array([[(i - j) * a ** (i - j - 1) if j < i else 0.0 for j in range(n)] for i in range(n)])
    return {0: float(s[2] @ dJ @ x), 1: s[1] + J.T @ s[2], 2: np.zeros(n)}


case("linear_recurrence", recurrence,
     lambda r: [Active(0.9), D(U(r, 6, -1, 1), r), D(garbage(r, 6), r)], _recurrence)


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
def logsumexp(x):
    m = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > m:
            m = x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s += math.exp(x[i] - m)
    return m + math.log(s)


def _logsumexp(v, s, seed):
    e = np.exp(v[0] - v[0].max())
    return {0: s[0] + seed * e / e.sum()}


case("logsumexp", logsumexp, lambda r: [D(U(r, 7, -2, 2), r)], _logsumexp)


@njit
def horner(c, x):
    p = 0.0
    for k in range(c.shape[0]):
        p = p * x + c[k]
    return p


def _horner(v, s, seed):
    c, x = v[0], 0.7
    n = c.shape[0]
    powers = x ** np.arange(n - 1, -1, -1.0)
    dpx = sum(c[k] * (n - 1 - k) * x ** (n - 2 - k) for k in range(n - 1))
    return {0: s[0] + seed * powers, 1: seed * dpx}


case("horner_active_point", horner, lambda r: [D(U(r, 5, -1, 1), r), Active(0.7)], _horner)


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
def max_value(x):
    m = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > m:
            m = x[i]
    return m * m


def _max_value(v, s, seed):
    x = v[0]
    dx = s[0].copy()
    k = int(np.argmax(x))
    dx[k] += seed * 2 * x[k]
    return {0: dx}


case("argmax_branch", max_value, lambda r: [D(np.array([0.3, 1.2, -0.4, 1.9, 0.8, 1.5]), r)],
     _max_value, seed=0.6)


@njit
def int_pow_dynamic(x, y, n):
    for i in range(x.shape[0]):
        y[i] = x[i] ** n


case("int_power_dynamic_n3", int_pow_dynamic, lambda r: [D(U(r, 6, -2, 2), r), D(garbage(r, 6), r), 3],
     lambda v, s, seed: {0: s[0] + s[1] * 3 * v[0] ** 2, 1: np.zeros(6)})
case("int_power_dynamic_neg", int_pow_dynamic,
     lambda r: [D(A(r, 6, 0.4, 2), r), D(garbage(r, 6), r), -3],
     lambda v, s, seed: {0: s[0] + s[1] * -3 * v[0] ** -4.0, 1: np.zeros(6)})


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
def softplus_weighted(x, w, out):
    s = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        sp = v + math.log1p(math.exp(-v)) if v > 0 else math.log1p(math.exp(v))
        s += w[i] * sp
    out[0] = s


def _softplus(v, s, seed):
    x, w = v[0], v[1]
    return {0: s[0] + s[2][0] * w / (1 + np.exp(-x)), 2: np.zeros(1)}


case("softplus_select_to_output", softplus_weighted,
     lambda r: [D(A(r, 6, 0.2, 3), r), Const(U(r, 6, 0.5, 1.5)), D(garbage(r, 1), r)], _softplus)


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


# ---------------------------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------------------------

def _assert_close(actual, expected, rtol, what):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    atol = rtol * max(1.0, float(np.max(np.abs(expected))) if expected.size else 0.0)
    err = np.abs(actual - expected)
    ok = np.all(err <= atol + rtol * np.abs(expected))
    assert ok, (f"{what}: max abs err {np.max(err):.3e} (rtol {rtol:g})\n"
                f"  got      {actual.ravel()}\n  expected {expected.ravel()}")


def _ids(cases):
    return [c.name for c in cases]


def _initial(args):
    """Copies of the initial primal values and shadows (None where there is no shadow)."""
    v = [np.array(x, copy=True) if isinstance(x, np.ndarray) else x for x in vals(args)]
    s = [np.array(a.shadow, copy=True) if hasattr(a, "shadow") else None for a in args]
    return v, s


def fake_autodiff(analytic, perturb=None, skip_primal=False):
    """An `autodiff` stand-in that writes `analytic`'s gradient (arg `perturb` made wrong) and
    runs the primal in place. Used to test the checker without the AD."""
    calls = []

    def fake(kernel, *args, seed=1.0, **kw):
        calls.append(args)
        expected = analytic(*_initial(args), seed)
        if not skip_primal:
            kernel(*vals(args))
        out = [None] * len(args)
        for i, e in expected.items():
            e = np.array(e, dtype=np.float64, copy=True)
            if i == perturb:
                e.flat[0] += 0.05 * max(1.0, float(np.max(np.abs(e))))
            if isinstance(args[i], Active):
                out[i] = float(e)
            else:
                args[i].shadow[...] = e
        return tuple(out)
    fake.calls = calls
    return fake


def _kernel_ir_features(kernel):
    """Float instructions and called functions (.f32/.f64 dropped) in the kernel's optimised IR
    (every compiled signature; Python wrappers left out)."""
    ops, calls = set(), set()
    for sig in kernel.signatures:
        text = kernel.inspect_llvm(sig)
        for fn in re.findall(r"^define [^\n]*\n(?:.*\n)*?^}", text, flags=re.M):
            header = fn.split("\n", 1)[0]
            if "cpython." in header or "cfunc." in header:
                continue
            ops.update(re.findall(r"= (fadd|fsub|fmul|fdiv|frem|fneg|fcmp|select|fpext|fptrunc"
                                  r"|sitofp|uitofp|fptosi)\b", fn))
            for name in re.findall(r"call [^@\n]*@\"?([\w.$]+)", fn):
                calls.add(re.sub(r"\.(f32|f64)$", "", name))
    return ops | calls


ANALYTIC = [c for c in CASES if c.analytic is not None]


def test_corpus_size():
    assert len(CASES) >= 60
    assert len({c.kernel for c in CASES}) >= 60, "distinct kernels"
    assert len({c.name for c in CASES}) == len(CASES)


def _check_reference(c, monkeypatch):
    """Without the AD: the kernel's IR contains what the case claims to cover; the
    finite-difference reference of the plain kernel agrees with the hand derivative;
    check_gradient accepts that derivative and rejects it perturbed (autodiff faked)."""
    args = c.args()
    c.kernel(*vals(c.args()))  # compile for the case's own types (fd_dtype may differ)
    missing = c.covers - _kernel_ir_features(c.kernel)
    assert not missing, f"corpus: {c.name}: the kernel's IR has no {sorted(missing)}"
    if c.analytic is None:
        return
    fd = finite_difference(c.kernel, *args, seed=c.seed, eps=c.eps, fd_dtype=c.fd_dtype)
    expected = c.analytic(*_initial(args), c.seed)
    assert set(expected) == {i for i, f in enumerate(fd) if f is not None}, \
        "corpus: the analytic derivative covers every differentiated argument"
    for i, e in expected.items():
        _assert_close(fd[i], e, c.rtol, f"corpus: {c.name} arg {i} (finite differences vs analytic)")

    kw = dict(seed=c.seed, rtol=c.rtol, eps=c.eps, fd_dtype=c.fd_dtype)
    with monkeypatch.context() as m:
        m.setattr(enzyme_py.api, "autodiff", fake_autodiff(c.analytic))
        rep = check_gradient(c.kernel, *c.args(), **kw)
        assert rep.passed, f"checker: rejects the analytic derivative\n{rep}"
        for i in expected:
            m.setattr(enzyme_py.api, "autodiff", fake_autodiff(c.analytic, perturb=i))
            bad = check_gradient(c.kernel, *c.args(), **kw)
            assert not bad[i].passed and not bad.passed, f"checker: perturbed arg {i} accepted\n{bad}"


def _check_autodiff(c):
    """autodiff agrees with finite differences (and with the hand derivative, where given)."""
    args = c.args()
    before = _initial(args)
    rep = check_gradient(c.kernel, *args, seed=c.seed, rtol=c.rtol, eps=c.eps, fd_dtype=c.fd_dtype)
    assert rep.passed, f"autodiff: {c.name}\n{rep}"
    # check_gradient works on copies: the caller's arrays are untouched
    after = _initial(args)
    for x0, x1 in zip(before[0] + before[1], after[0] + after[1]):
        np.testing.assert_array_equal(np.asarray(x1), np.asarray(x0))
    if c.analytic is not None:
        expected = c.analytic(*before, c.seed)
        for i, e in expected.items():
            _assert_close(rep[i].ad, e, rep[i].rtol, f"autodiff: {c.name} arg {i} (vs analytic)")


@pytest.mark.parametrize("c", CASES, ids=_ids(CASES))
def test_kernel(c, monkeypatch):
    """One test per case, so that each kernel compiles in one worker only: first the corpus and
    the checker are validated without the AD (failures say "corpus:" / "checker:"), then the
    AD is checked (failures say "autodiff:")."""
    _check_reference(c, monkeypatch)
    _check_autodiff(c)


# Every derivative rule, as it appears in Numba's optimised IR of the kernels above.
REQUIRED = {
    "fadd", "fsub", "fmul", "fdiv", "fneg", "frem", "fpext", "fptrunc", "select", "fcmp",
    "sitofp", "uitofp", "fptosi",
    "llvm.sin", "llvm.cos", "llvm.exp", "llvm.exp2", "llvm.log", "llvm.log10", "llvm.pow",
    "llvm.fabs", "llvm.copysign", "llvm.fma", "llvm.fmuladd", "llvm.minnum", "llvm.maxnum",
    "llvm.floor", "llvm.ceil", "llvm.rint", "llvm.trunc",
    "tan", "log2", "sqrt", "tanh", "sinh", "cosh", "asin", "acos", "atan", "atan2", "asinh",
    "acosh", "atanh", "exp", "expm1", "log1p", "cbrt", "hypot", "erf", "erfc", "lgamma",
    "tanhf", "log1pf", "atanf", "sqrtf",
}


def test_rules_covered():
    """The cases, together, claim every rule (test_kernel checks each claim against the IR)."""
    claimed = set().union(*(c.covers for c in CASES))
    assert REQUIRED <= claimed, f"no case covers {sorted(REQUIRED - claimed)}"
