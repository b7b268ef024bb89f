"""Applying a rule's partials (registry.py): d * dy/dx_k, guarded by the strong zero.

Both modes use it: reverse mode with d the adjoint of the result (one partial per active
operand), forward mode with d the tangent of operand k (the tangent is the sum over k).

A zero d contributes exactly zero, even where the partial is inf or NaN: a term that a select,
`nansum` or an `isnan` test drops has a zero adjoint, and LLVM computes both sides of such a
branch (`np.where(np.isnan(w), 0, x * w)`, `np.cbrt` of a negative number). The guard is

    c = d * partial;  contribution = (d == 0 and c is NaN) ? 0 : c

Where d is zero, c is a signed zero or NaN (0 * inf, 0 * NaN), so this is `d == 0 ? 0 : c` up
to the sign of a zero; written so, the select's own derivative is c's wherever c is a number,
which is what forward mode over a gradient (Hessian-vector products) needs: an adjoint that is
zero at this point can still move. Batched mode reads the same guard lane by lane
(transforms/forward/instructions.py). No guard is emitted where it cannot matter: for a rule
whose partials never scale d by a primal value (`zero_guard="never"`: fadd, select), or one whose
partials are finite wherever the primal values they read are (`"operands"`: fmul, fma) when
those values are finite (analysis/finite.py: constants, integers converted to float).
"""
from __future__ import annotations

from ..analysis.finite import finite
from ..ir.builder import RuleBuilder
from ..ir.values import ConstFloat


class Operands:
    """The primal operands of an instruction as a rule reads them: `x[k]` is fetched on first use
    by `fetch(value)`; `sibling(name)` is the primal's call to `name` on the same operands in the
    same block (sin's rule needs the cos of the same x, which the primal often computes too), as
    `fetch_call(call)` makes it available, or None when the primal has no such call. `read`
    collects the indices the rule fetched."""

    def __init__(self, inst, fetch, fetch_call):
        self.inst, self.fetch, self.fetch_call = inst, fetch, fetch_call
        self.read: set[int] = set()

    def __getitem__(self, k):
        self.read.add(k)
        return self.fetch(self.inst.ops[k])

    def operand_type(self, k):
        return self.inst.ops[k].type

    def __len__(self):
        return len(self.inst.ops)

    def sibling(self, callee_name):
        self.read.add(-1)     # another primal value: not known to be finite
        call = self.inst.sibling_call(callee_name)
        return self.fetch_call(call) if call is not None else None


def needs_guard(rule, x: Operands) -> bool:
    """May the partial just built be inf or NaN where d is zero?"""
    if rule.zero_guard == "never":
        return False
    if rule.zero_guard == "operands":
        return any(k < 0 or not finite(x.inst.ops[k]) for k in x.read)
    return True


def contribution(rule, k: int, b, rb: RuleBuilder, d, x, y, zero=None):
    """(d * dy/dx_k by the rule's partial k, the test d == 0 it used): the partial is built with
    the rule builder `rb`, the guard with `b`. `zero`: the test already emitted for this d (one
    per instruction in reverse mode), or None. The contribution is None when the partial gives
    none."""
    x.read = set()
    c = rule.partial(k)(rb, d, x, y)
    if c is None or isinstance(c, ConstFloat) or not needs_guard(rule, x):
        return c, zero
    return strong_zero(b, d, c, zero)


def strong_zero(b, d, c, zero=None):
    """(`(d == 0 and c is NaN) ? 0 : c`, the test d == 0): the guard above, for any c linear in
    d (a BLAS record's or a host's rule may use it too)."""
    zero = zero or b.fcmp("oeq", d, ConstFloat(d.type, 0.0))
    nan = b.fcmp("uno", c, c)
    return b.select(b.binop("and", zero, nan), ConstFloat(d.type, 0.0), c), zero
