"""Rules for LLVM float intrinsics. See registry.py for the contract."""
import math

from .registry import ZERO, define, zero


def c(b, d, v):
    """A float constant of d's type."""
    return b.fconst(d.type, v)


def sq(b, v):
    return b.fmul(v, v)


def partner(b, x, mine, other):
    """`other`(x[0]) for the rule of `mine`(x[0]): the primal's own call when it has one."""
    v = x.sibling(x.inst.callee_name.replace(mine, other, 1))
    return v if v is not None else b.intrinsic(other, [x[0]])


define("llvm.sin", lambda b, d, x, y: b.fmul(d, partner(b, x, "sin", "cos")), spellings=("sin", "sinf"))
define("llvm.cos", lambda b, d, x, y: b.fneg(b.fmul(d, partner(b, x, "cos", "sin"))), spellings=("cos", "cosf"))
define("llvm.tan", lambda b, d, x, y: b.fmul(d, b.fadd(c(b, d, 1.0), sq(b, y))), spellings=("tan", "tanf"))
define("llvm.exp", lambda b, d, x, y: b.fmul(d, y), spellings=("exp", "expf"))
define("llvm.exp2", lambda b, d, x, y: b.fmul(b.fmul(d, y), c(b, d, math.log(2.0))), spellings=("exp2", "exp2f"))
define("llvm.exp10", lambda b, d, x, y: b.fmul(b.fmul(d, y), c(b, d, math.log(10.0))))
define("llvm.log", lambda b, d, x, y: b.fdiv(d, x[0]), spellings=("log", "logf"))
define("llvm.log2", lambda b, d, x, y: b.fdiv(d, b.fmul(x[0], c(b, d, math.log(2.0)))), spellings=("log2", "log2f"))
define("llvm.log10", lambda b, d, x, y: b.fdiv(d, b.fmul(x[0], c(b, d, math.log(10.0)))), spellings=("log10", "log10f"))
define("llvm.sqrt", lambda b, d, x, y: b.fdiv(d, b.fmul(c(b, d, 2.0), y)), spellings=("sqrt", "sqrtf"))
define("llvm.fabs", lambda b, d, x, y: b.fmul(d, b.intrinsic("copysign", [c(b, d, 1.0), x[0]])),
       spellings=("fabs", "fabsf"))
define("llvm.copysign",
       lambda b, d, x, y: b.fmul(d, b.fmul(b.intrinsic("copysign", [c(b, d, 1.0), x[0]]),
                                           b.intrinsic("copysign", [c(b, d, 1.0), x[1]]))),
       ZERO, spellings=("copysign", "copysignf"), zero_guard="never")
# pow(a, e): d e a^(e-1) and d y log(a)
define("llvm.pow",
       lambda b, d, x, y: b.fmul(d, b.fmul(x[1], b.intrinsic("pow", [x[0], b.fsub(x[1], c(b, d, 1.0))]))),
       lambda b, d, x, y: b.fmul(d, b.fmul(y, b.intrinsic("log", [x[0]]))), spellings=("pow", "powf"))
# powi(a, n) with an integer n: d n a^(n-1). llvm.pow, not llvm.powi: a variable powi lowers
# to compiler-rt's __powidf2, which a JIT process may not have.
define("llvm.powi",
       lambda b, d, x, y: b.fmul(d, b.fmul(b.cast("sitofp", x[1], d.type),
                                           b.intrinsic("pow", [x[0], b.cast("sitofp", b.sub(
                                               x[1], b.iconst(x[1].type, 1)), d.type)]))),
       None)
define("llvm.fma", lambda b, d, x, y: b.fmul(d, x[1]), lambda b, d, x, y: b.fmul(d, x[0]),
       lambda b, d, x, y: d, spellings=("llvm.fmuladd", "fma", "fmaf"),
       zero_guard="operands")


def pick_first(pred):
    """min/max: the adjoint goes to the operand that was chosen (the first on ties)."""
    def first(b, d, x, y):
        return b.select(b.fcmp(pred, x[0], x[1]), d, c(b, d, 0.0))

    def second(b, d, x, y):
        return b.select(b.fcmp(pred, x[0], x[1]), c(b, d, 0.0), d)
    return first, second


define("llvm.minnum", *pick_first("ole"), spellings=("llvm.minimum", "llvm.minimumnum", "fmin", "fminf"),
       zero_guard="never")
define("llvm.maxnum", *pick_first("oge"), spellings=("llvm.maximum", "llvm.maximumnum", "fmax", "fmaxf"),
       zero_guard="never")

for name in ("floor", "ceil", "round", "trunc", "rint", "nearbyint", "roundeven"):
    zero(f"llvm.{name}", spellings=(name, name + "f"))
