"""Which float values are finite (never NaN or infinite) wherever they are defined.

The strong-zero guard (partials.py) is left out where every primal value a partial reads
is finite. The facts are local, with no fixed point: a finite constant; an integer of 64 bits or
fewer converted to f32 or wider (none overflows); fneg, freeze, fabs or copysign of a finite value;
a select of two finite values. Anything else (a load, an argument, a phi, arithmetic that may
overflow) is not known to be finite.
"""
from __future__ import annotations

import math

from ..ir import types as T
from ..ir.values import ConstFloat

_DEPTH = 4   # how far through fneg / select / fabs chains to look


def finite(v, depth: int = _DEPTH) -> bool:
    """Is `v` a float that is finite wherever it is defined?"""
    if isinstance(v, ConstFloat):
        return math.isfinite(v.value)
    op = getattr(v, "opcode", None)
    if depth == 0 or op is None:
        return False
    if op in ("sitofp", "uitofp"):   # f16 overflows at 65520: only f32 and wider
        src = v.ops[0].type
        return isinstance(src, T.IntType) and src.bits <= 64 and getattr(v.type, "bits", 0) >= 32
    if op in ("fneg", "freeze"):
        return finite(v.ops[0], depth - 1)
    if op == "select":
        return finite(v.ops[1], depth - 1) and finite(v.ops[2], depth - 1)
    if op == "call" and v.callee_name.startswith(("llvm.fabs.", "llvm.copysign.")):
        return finite(v.ops[0], depth - 1)
    return False


NAN_TESTS = "tests-nan"     # module.facts key


def tests_nan(module) -> bool:
    """Whether a function of `module` tests a float for NaN or infinity (`fcmp uno` / `fcmp ord`,
    or a comparison with an infinite constant: `isnan`, `isinf`, `isfinite`, `nansum`, a missing
    observation skipped). Computed once, on the module the transform is given (the drivers ask
    first, before any guard of their own is emitted)."""
    found = module.facts.get(NAN_TESTS)
    if found is None:
        found = module.facts[NAN_TESTS] = any(
            _tests_nan(i) for fn in module.functions.values()
            for blk in getattr(fn, "blocks", ()) for i in blk.instructions)
    return found


def _tests_nan(inst) -> bool:
    if inst.opcode != "fcmp":
        return False
    return inst.pred in ("uno", "ord") or any(
        isinstance(v, ConstFloat) and math.isinf(v.value) for v in inst.ops)
