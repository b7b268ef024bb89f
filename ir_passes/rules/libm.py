"""Rules for libm functions. See registry.py for the contract."""
import math

from ..ir import types as T
from ..ir.builder import math_name
from ..ir.values import Global
from ..runtime.helpers import ensure
from .intrinsics import c, sq
from .registry import ZERO, define


def libm(name, *partials):
    define(name, *partials, spellings=(name + "f",))


def rsqrt_of(b, d, v):
    return b.fdiv(d, b.intrinsic("sqrt", [v]))


def digamma(b, x):
    """psi(x), by the runtime helper enzpy.digamma (in double precision)."""
    ensure(b.module, "enzpy.digamma")
    log = math_name(b.module, "log", T.f64)
    if log is not None:     # the helper's own log, on a target that names it differently
        b.module.declare(log, T.f64, [T.f64])
        for inst in b.module.functions["enzpy.digamma"].instructions():
            if inst.opcode == "call" and inst.callee_name == "llvm.log.f64":
                inst.callee = Global(T.ptr, log)
    wide = b.cast("fpext", x, T.f64)
    r = b.call("enzpy.digamma", T.f64, [wide])
    return b.cast("fptrunc", r, x.type)


libm("tanh", lambda b, d, x, y: b.fmul(d, b.fsub(c(b, d, 1.0), sq(b, y))))
libm("sinh", lambda b, d, x, y: b.fmul(d, b.libm("cosh", [x[0]])))
libm("cosh", lambda b, d, x, y: b.fmul(d, b.libm("sinh", [x[0]])))
libm("asin", lambda b, d, x, y: rsqrt_of(b, d, b.fsub(c(b, d, 1.0), sq(b, x[0]))))
libm("acos", lambda b, d, x, y: b.fneg(rsqrt_of(b, d, b.fsub(c(b, d, 1.0), sq(b, x[0])))))
libm("atan", lambda b, d, x, y: b.fdiv(d, b.fadd(c(b, d, 1.0), sq(b, x[0]))))
libm("atan2",
     lambda b, d, x, y: b.fdiv(b.fmul(d, x[1]), b.fadd(sq(b, x[0]), sq(b, x[1]))),
     lambda b, d, x, y: b.fneg(b.fdiv(b.fmul(d, x[0]), b.fadd(sq(b, x[0]), sq(b, x[1])))))
libm("asinh", lambda b, d, x, y: rsqrt_of(b, d, b.fadd(sq(b, x[0]), c(b, d, 1.0))))
libm("acosh", lambda b, d, x, y: rsqrt_of(b, d, b.fsub(sq(b, x[0]), c(b, d, 1.0))))
libm("atanh", lambda b, d, x, y: b.fdiv(d, b.fsub(c(b, d, 1.0), sq(b, x[0]))))
libm("expm1", lambda b, d, x, y: b.fmul(d, b.fadd(y, c(b, d, 1.0))))
libm("log1p", lambda b, d, x, y: b.fdiv(d, b.fadd(x[0], c(b, d, 1.0))))
libm("cbrt", lambda b, d, x, y: b.fdiv(d, b.fmul(c(b, d, 3.0), sq(b, y))))
libm("hypot", lambda b, d, x, y: b.fdiv(b.fmul(d, x[0]), y), lambda b, d, x, y: b.fdiv(b.fmul(d, x[1]), y))
libm("erf", lambda b, d, x, y: b.fmul(d, b.fmul(c(b, d, 2.0 / math.sqrt(math.pi)),
                                                 b.intrinsic("exp", [b.fneg(sq(b, x[0]))]))))
libm("erfc", lambda b, d, x, y: b.fneg(b.fmul(d, b.fmul(c(b, d, 2.0 / math.sqrt(math.pi)),
                                                         b.intrinsic("exp", [b.fneg(sq(b, x[0]))])))))
libm("lgamma", lambda b, d, x, y: b.fmul(d, digamma(b, x[0])))
libm("tgamma", lambda b, d, x, y: b.fmul(d, b.fmul(y, digamma(b, x[0]))))
# ldexp(x, n) = x 2^n: linear in x; the integer exponent has no derivative
define("ldexp", lambda b, d, x, y: b.libm("ldexp", [d, x[1]]), None, spellings=("ldexpf",),
       zero_guard="never")
# nextafter(x, t): the float next to x towards t; slope 1 in x, piecewise constant in t
define("nextafter", lambda b, d, x, y: d, ZERO, spellings=("nextafterf",), zero_guard="never")
