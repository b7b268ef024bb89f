"""Applying a rule's partials (registry.py): d * dy/dx_k, guarded by the strong zero.

Both modes use it: reverse mode with d the adjoint of the result (one partial per active
operand), forward mode with d the tangent of operand k (the tangent is the sum over k).

A zero d contributes exactly zero, even where the partial is inf or NaN: a term that a select,
`nansum` or an `isnan` test drops has a zero adjoint, and LLVM computes both sides of such a
branch (`np.where(np.isnan(w), 0, x * w)`, `np.cbrt` of a negative number). The guard is

    c = d * partial;  contribution = (d != 0 or F) ? c : 0

with F a test that c is a number where d is zero: for a rule whose partials are finite wherever
the operands they read are (`zero_guard="operands"`: fmul's d * x[1], fma) F is "those operands
are finite", a test of primal values that stays off the adjoint's dependency chain (and out of
a loop when the operand is invariant); for any other rule F is `c is not NaN`. Where d is zero
and F fails, c is 0 * inf or NaN; where F holds, c is d * partial exactly, so the select's own
derivative is c's wherever c is a number, which is what forward mode over a gradient
(Hessian-vector products) needs: an adjoint that is zero at this point can still move. Batched
mode reads the guard lane by lane (transforms/forward/instructions.py). No guard is emitted for
a rule whose partials never scale d by a primal value (`zero_guard="never"`: fadd, select), nor
for an "operands" rule whose operands read are proven finite (rules/finite.py: constants,
integers converted to float), nor for an "operands" rule in a module that never tests a float
for NaN or infinity (`tests_nan`): there the guard on every product cost 1.4x (heat) to 3.6x (n-body) of the
gradient's time, and the masks that meet NaN or infinite data (`nansum`, `isnan` or
`isinf` tests, missing observations) test for it. A product masked by another test whose other factor is inf or NaN
(`np.where(x > 0, np.sqrt(x) * w, 0)` at x < 0, differentiated in w) still gives NaN there.
"""
from __future__ import annotations

import math

from .finite import finite, tests_nan
from ..ir.builder import RuleBuilder
from ..ir.values import ConstFloat


class Operands:
    """The primal operands of an instruction as a rule reads them: `x[k]` is fetched on first use
    by `fetch(value)`; `sibling(name)` is the primal's call to `name` on the same operands in the
    same block (sin's rule needs the cos of the same x, which the primal often computes too), as
    `fetch_call(call)` makes it available, or None when the primal has no such call. `read`
    maps the indices the rule fetched to the values it got."""

    def __init__(self, inst, fetch, fetch_call):
        self.inst, self.fetch, self.fetch_call = inst, fetch, fetch_call
        self.read: dict = {}

    def __getitem__(self, k):
        v = self.fetch(self.inst.ops[k])
        self.read[k] = v
        return v

    def operand_type(self, k):
        return self.inst.ops[k].type

    def __len__(self):
        return len(self.inst.ops)

    def sibling(self, callee_name):
        call = self.inst.sibling_call(callee_name)
        return self.fetch_call(call) if call is not None else None


def contribution(rule, k: int, b, rb: RuleBuilder, d, x, y, nonzero=None):
    """(d * dy/dx_k by the rule's partial k under the guard, the test d != 0 it used): the
    partial is built with the rule builder `rb`, the guard with `b`. `nonzero`: the test
    already emitted for this d (one per instruction in reverse mode), or None. The contribution
    is None when the partial gives none."""
    x.read = {}
    c = rule.partial(k)(rb, d, x, y)
    if c is None or isinstance(c, ConstFloat) or rule.zero_guard == "never":
        return c, nonzero
    if rule.zero_guard == "operands":
        unknown = [v for j, v in sorted(x.read.items()) if not finite(x.inst.ops[j])]
        if not unknown or not tests_nan(b.module):
            return c, nonzero
        number = finite_test(b, unknown)
    else:
        number = b.fcmp("ord", c, c)
    return strong_zero(b, d, c, number, nonzero)


def finite_test(b, values):
    """An i1 that is true where every one of `values` is finite."""
    test = None
    for v in values:
        t = b.fcmp("olt", b.intrinsic("fabs", [v]), ConstFloat(v.type, math.inf))
        test = t if test is None else b.binop("and", test, t)
    return test


def strong_zero(b, d, c, number, nonzero=None):
    """(`(d != 0 or number) ? c : 0`, the test d != 0): the guard above, for any c linear in d
    and an i1 `number` that holds wherever c is a number when d is zero."""
    nonzero = nonzero or b.fcmp("une", d, ConstFloat(d.type, 0.0))
    keep = b.binop("or", nonzero, number)
    return b.select(keep, c, ConstFloat(d.type, 0.0)), nonzero
