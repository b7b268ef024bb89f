"""Rules for libdevice, the math library of CUDA's NVPTX target (`__nv_sin`, `__nv_sinf`, ...).

A CUDA front end calls `double @__nv_sin(double)` for float64 and `@__nv_sinf` for float32;
with fast math some float32 functions become `__nv_fast_sinf` and friends. Most are spellings
of the rules in intrinsics.py and libm.py; the rest are defined here.

On this target a rule's own math calls must be libdevice calls too: LLVM's NVPTX backend cannot
select `llvm.sin.f64` ("Cannot select: fsin"), nor call a libm that does not exist there.
`spelling` is the name map a module uses for that (`module.math_names`, ir/builder.py): with
it, `b.intrinsic("cos", [x])` in a rule emits `__nv_cos(x)`. Intrinsics the backend selects
itself (sqrt, fabs, copysign, fma, min/max, floor and the other roundings) keep their LLVM names.
"""
import math

from . import arithmetic, intrinsics, libm  # noqa: F401 - the rules spelled here are registered there
from .intrinsics import c, sq
from .registry import RULES, define, inactive, zero

# libdevice name (without __nv_) -> the key of the rule it shares
SAME_AS = {
    "sin": "llvm.sin", "cos": "llvm.cos", "tan": "llvm.tan", "exp": "llvm.exp", "exp2": "llvm.exp2",
    "exp10": "llvm.exp10", "log": "llvm.log", "log2": "llvm.log2", "log10": "llvm.log10",
    "sqrt": "llvm.sqrt", "fabs": "llvm.fabs", "copysign": "llvm.copysign", "pow": "llvm.pow",
    "powi": "llvm.powi", "fma": "llvm.fma", "fmin": "llvm.minnum", "fmax": "llvm.maxnum",
    "tanh": "tanh", "sinh": "sinh", "cosh": "cosh", "asin": "asin", "acos": "acos", "atan": "atan",
    "atan2": "atan2", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "expm1": "expm1",
    "log1p": "log1p", "cbrt": "cbrt", "hypot": "hypot", "erf": "erf", "erfc": "erfc",
    "lgamma": "lgamma",
}
# float32 fast-math variants (`__nv_fast_sinf`)
FAST = {"sinf": "llvm.sin", "cosf": "llvm.cos", "tanf": "llvm.tan", "expf": "llvm.exp",
        "logf": "llvm.log", "log2f": "llvm.log2", "log10f": "llvm.log10", "powf": "llvm.pow",
        "exp10f": "llvm.exp10"}

for _name, _key in SAME_AS.items():
    RULES[f"__nv_{_name}"] = RULES[f"__nv_{_name}f"] = RULES[_key]
for _name, _key in FAST.items():
    RULES[f"__nv_fast_{_name}"] = RULES[_key]


def nv(name, *partials, zero_guard="always"):
    define(f"__nv_{name}", *partials, spellings=(f"__nv_{name}f",), zero_guard=zero_guard)


nv("rsqrt", lambda b, d, x, y: b.fmul(b.fmul(d, c(b, d, -0.5)), b.fmul(y, sq(b, y))))
nv("rcbrt", lambda b, d, x, y: b.fmul(b.fmul(d, c(b, d, -1.0 / 3.0)), b.fdiv(y, x[0])))
nv("sinpi", lambda b, d, x, y: b.fmul(b.fmul(d, c(b, d, math.pi)), b.libm("cospi", [x[0]])))
nv("cospi", lambda b, d, x, y: b.fneg(b.fmul(b.fmul(d, c(b, d, math.pi)), b.libm("sinpi", [x[0]]))))
# normcdf(x) = Phi(x): d/dx = exp(-x^2/2) / sqrt(2 pi)
nv("normcdf", lambda b, d, x, y: b.fmul(d, b.fmul(c(b, d, 1.0 / math.sqrt(2.0 * math.pi)),
                                                 b.intrinsic("exp", [b.fmul(c(b, d, -0.5), sq(b, x[0]))]))))
# erfinv(x) = y: d/dx = sqrt(pi)/2 exp(y^2)
nv("erfinv", lambda b, d, x, y: b.fmul(d, b.fmul(c(b, d, math.sqrt(math.pi) / 2.0),
                                                b.intrinsic("exp", [sq(b, y)]))))
nv("erfcinv", lambda b, d, x, y: b.fneg(b.fmul(d, b.fmul(c(b, d, math.sqrt(math.pi) / 2.0),
                                                        b.intrinsic("exp", [sq(b, y)])))))
# fmod(a, m) = a - trunc(a / m) m
nv("fmod", lambda b, d, x, y: d,
   lambda b, d, x, y: b.fneg(b.fmul(d, b.intrinsic("trunc", [b.fdiv(x[0], x[1])]))))
nv("fdim", lambda b, d, x, y: b.select(b.fcmp("ogt", x[0], x[1]), d, c(b, d, 0.0)),
   lambda b, d, x, y: b.select(b.fcmp("ogt", x[0], x[1]), b.fneg(d), c(b, d, 0.0)),
   zero_guard="never")
define("__nv_fast_fdividef", *RULES["fdiv"].partials)
define("__nv_fdiv_rn", *RULES["fdiv"].partials, spellings=("__nv_ddiv_rn", "__nv_fdiv_rz",
                                                           "__nv_ddiv_rz"))
for _name in ("floor", "ceil", "trunc", "rint", "round", "nearbyint"):
    zero(f"__nv_{_name}", spellings=(f"__nv_{_name}f",))
define("__nv_ldexp", lambda b, d, x, y: b.libm("ldexp", [d, x[1]]), None, spellings=("__nv_ldexpf",),
       zero_guard="never")
for _name in ("isnand", "isnanf", "isinfd", "isinff", "isfinited", "finitef", "signbitd", "signbitf",
              "ilogb", "ilogbf", "llrint", "llrintf", "llround", "llroundf"):
    inactive(f"__nv_{_name}")

# What a rule's math call is named on this target (module.math_names): the LLVM intrinsic or
# libm base name -> the libdevice function. None keeps the LLVM intrinsic.
SELECTED = {"sqrt", "fabs", "copysign", "fma", "fmuladd", "minnum", "maxnum", "minimum", "maximum",
            "floor", "ceil", "trunc", "rint", "nearbyint", "round", "roundeven"}


def spelling(base: str, bits: int) -> str | None:
    """The libdevice name of math function `base` (`cos`, `pow`, `cosh`) on a `bits`-bit float;
    None when LLVM's NVPTX backend selects the intrinsic itself."""
    if base in SELECTED:
        return None
    return f"__nv_{base}f" if bits == 32 else f"__nv_{base}"
