"""Functions generated kernels call besides `math` and NumPy: LLVM intrinsics and libm functions
Numba does not emit from plain Python (so that every entry of the derivative rule table can be
reached): `fma`, `fmuladd`, `minnum`, `maxnum`, `powi` (literal exponents only: a variable one
makes LLVM call `__powidf2`, which Numba's JIT lacks), `exp10`, `nearbyint`, `roundeven`, `llvm_round` (callers
pass float64: `np.float64(x)`), and the libm `cbrt` / `exp` called directly.

The traced copy of a kernel runs as plain Python and uses `prims_py` instead.
"""
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

# ---------------------------------------------------------------------------------------------
# intrinsics
# ---------------------------------------------------------------------------------------------


def _float_intrinsic(name, nargs):
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
def fma(typingctx, a, b, c):
    return _float_intrinsic("llvm.fma", 3)(typingctx, a, b, c)


@intrinsic
def fmuladd(typingctx, a, b, c):
    return _float_intrinsic("llvm.fmuladd", 3)(typingctx, a, b, c)


@intrinsic
def minnum(typingctx, a, b):
    return _float_intrinsic("llvm.minnum", 2)(typingctx, a, b)


@intrinsic
def maxnum(typingctx, a, b):
    return _float_intrinsic("llvm.maxnum", 2)(typingctx, a, b)


@intrinsic
def exp10(typingctx, a):
    return _float_intrinsic("llvm.exp10", 1)(typingctx, a)


@intrinsic
def nearbyint(typingctx, a):
    return _float_intrinsic("llvm.nearbyint", 1)(typingctx, a)


@intrinsic
def llvm_round(typingctx, a):
    """llvm.round: halves away from zero (Python's round() is rint)."""
    return _float_intrinsic("llvm.round", 1)(typingctx, a)


@intrinsic
def roundeven(typingctx, a):
    return _float_intrinsic("llvm.roundeven", 1)(typingctx, a)


@intrinsic
def powi(typingctx, a, n):
    """llvm.powi.f64.i32(a, n): a float to an integer power."""
    if not isinstance(a, types.Float) or not isinstance(n, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        lty = context.get_value_type(a)
        full = "llvm.powi.%s.i32" % ("f64" if lty == ir.DoubleType() else "f32")
        fn = builder.module.globals.get(full)
        if fn is None:
            fn = ir.Function(builder.module, ir.FunctionType(lty, [lty, ir.IntType(32)]), name=full)
        x, k = args
        kt = context.get_value_type(n)
        if kt.width > 32:
            k = builder.trunc(k, ir.IntType(32))
        elif kt.width < 32:
            k = builder.sext(k, ir.IntType(32))
        return builder.call(fn, [x, k])
    return a(a, n), codegen


libm_cbrt = types.ExternalFunction("cbrt", types.float64(types.float64))
libm_exp = types.ExternalFunction("exp", types.float64(types.float64))
