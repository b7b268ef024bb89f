"""Tangents from the rule table: what arithmetic, casts and math calls share."""
from __future__ import annotations

from ...ir import types as T
from ...ir.builder import RuleBuilder
from ...ir.values import Constant
from ...rules.partials import Operands, contribution


def check_scalar(fm, inst) -> None:
    if not isinstance(inst.type, T.FloatType):
        raise fm.unsupported(f"vector or aggregate float data ({inst.type}) is differentiated", inst)


def apply_rule(fm, rule, inst) -> None:
    """tangent_j(y) = sum_k partial_k(d = tangent_j(x_k)), strong zero unless the rule is linear."""
    if rule.zero:
        fm.tmap[id(inst)] = None   # zero wherever it is defined
        return
    b = fm.b
    # sin's tangent needs the cos of the same x: a copy of the primal's call, emitted at the
    # tangent, which LLVM's CSE merges with the primal's own (a call the rule made itself would
    # be marked for vector math, vector_math.py, and merge with nothing)
    x = Operands(inst, fm.val, lambda call: fm.clone(call, name=""))
    y = fm.val(inst)
    tangents = [fm.tan(o) for o in inst.ops]
    for k, t in enumerate(tangents):
        if t is not None and rule.partial(k) is None:
            raise fm.unsupported(f"`{rule.key}` has no derivative with respect to operand {k}", inst)
    lanes = []
    rb = RuleBuilder(b)
    for j in range(fm.width):
        total = None
        for k, t in enumerate(tangents):
            if t is None:
                continue
            c, _ = contribution(rule, k, b, rb, t[j], x, y)
            if c is None:
                continue
            total = c if total is None else b.fadd(total, c)
        lanes.append(total if total is not None else fm.zero(inst.type))
    fm.tmap[id(inst)] = lanes if any(not isinstance(v, Constant) for v in lanes) else None
