"""Table-driven gradient corpus: small @njit kernels checked against central finite differences.

The cases live in test_kernels_math.py (one kernel per math function / instruction),
test_kernels_ops.py (comparisons, select, rounding, conversions, float32), test_kernels_loops.py
(control flow) and test_kernels_arrays.py (layouts, views, overwrite / accumulate semantics);
the machinery in test_kernels_base.py. The corpus is split so that Numba's debug-info pass, which
parses a kernel's whole source file on every debug compile, has small files to parse.

Every case is a kernel plus a builder of its (annotated) arguments from a fixed random
generator. Inputs stay inside each function's domain and away from branch boundaries, so the
finite difference of the plain kernel is a trustworthy reference.

`test_kernel[case]` in each file (one test per case, so each kernel compiles in one xdist
worker):

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

import test_kernels_arrays
import test_kernels_loops
import test_kernels_math
import test_kernels_ops

CASES = [c for m in (test_kernels_math, test_kernels_ops, test_kernels_loops, test_kernels_arrays)
         for c in m.corpus.cases]


def test_corpus_size():
    assert len(CASES) >= 60
    assert len({c.kernel for c in CASES}) >= 60, "distinct kernels"
    assert len({c.name for c in CASES}) == len(CASES)


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
    """The cases, together, claim every rule (each file's test_kernel checks the claims against the IR)."""
    claimed = set().union(*(c.covers for c in CASES))
    assert REQUIRED <= claimed, f"no case covers {sorted(REQUIRED - claimed)}"
