"""Applying a rule's partials (registry.py): d * dy/dx_k, guarded by the strong zero.

Both modes use it: reverse mode with d the adjoint of the result (one partial per active
operand), forward mode with d the tangent of operand k (the tangent is the sum over k).
Unless the rule is `linear`, a zero d contributes zero even where the partial is inf or NaN
(LLVM may speculate both sides of a branch: `np.cbrt` computes pow of a negative number and then
selects the other value).
"""
from __future__ import annotations

from ..ir.builder import RuleBuilder
from ..ir.values import ConstFloat


class Operands:
    """The primal operands of an instruction as a rule reads them: `x[k]` is fetched on first use
    by `fetch(value)`; `sibling(name)` is the primal's call to `name` on the same operands in the
    same block (sin's rule needs the cos of the same x, which the primal often computes too), as
    `fetch_call(call)` makes it available, or None when the primal has no such call."""

    def __init__(self, inst, fetch, fetch_call):
        self.inst, self.fetch, self.fetch_call = inst, fetch, fetch_call

    def __getitem__(self, k):
        return self.fetch(self.inst.ops[k])

    def operand_type(self, k):
        return self.inst.ops[k].type

    def __len__(self):
        return len(self.inst.ops)

    def sibling(self, callee_name):
        call = self.inst.sibling_call(callee_name)
        return self.fetch_call(call) if call is not None else None


def contribution(rule, k: int, b, rb: RuleBuilder, d, x, y, zero=None):
    """(d * dy/dx_k by the rule's partial k, the test d == 0 it used): the partial is built with
    the rule builder `rb`, the guard with `b`. `zero`: the test already emitted for this d (one
    per instruction in reverse mode), or None. The contribution is None when the partial gives
    none."""
    c = rule.partial(k)(rb, d, x, y)
    if c is None or rule.linear:
        return c, zero
    zero = zero or b.fcmp("oeq", d, ConstFloat(d.type, 0.0))
    return b.select(zero, ConstFloat(d.type, 0.0), c), zero
