"""The reverse of one instruction. Dispatch by opcode; arithmetic goes through the rule table."""
from __future__ import annotations

from ..analysis.types import kind
from ..ir import types as T
from ..ir.builder import RuleBuilder
from ..ir.values import ConstFloat
from ..rules.registry import lookup
from .availability import Lazy, Operands
from . import memory

NO_ADJOINT = {"phi"}  # phi adjoints move along edges (control.py)


def reverse_instruction(g, inst, block, b) -> None:
    """Emit the adjoint code of `inst` (from primal block `block`) at builder b."""
    handler = HANDLERS.get(inst.opcode)
    if handler is not None:
        handler(g, inst, block, b)
        return
    if inst.opcode in NO_ADJOINT or not g.act.is_active(inst):
        return
    rule = lookup(inst.opcode)
    if rule is None:
        raise g.unsupported(f"no derivative rule for `{inst.opcode}`", inst)
    apply_rule(g, rule, inst, block, b)


def apply_rule(g, rule, inst, block, b, operands=None) -> None:
    operands = inst.ops if operands is None else operands
    d = g.take_adjoint(b, inst)
    if rule.zero:
        return
    x = Operands(g.avail, inst, block, b)
    y = Lazy(inst.type, lambda: g.avail.primal(inst, block, b))
    is_zero = None
    rb = RuleBuilder(b)
    for k, op in enumerate(operands):
        if not g.act.is_active(op):
            continue
        partial = rule.partial(k)
        if partial is None:
            raise g.unsupported(f"`{rule.key}` has no derivative with respect to operand {k}", inst)
        contribution = partial(rb, d, x, y)
        if contribution is not None and not rule.linear:
            # strong zero: a zero adjoint contributes zero even where the partial is inf/NaN
            is_zero = is_zero or b.fcmp("oeq", d, ConstFloat(d.type, 0.0))
            contribution = b.select(is_zero, ConstFloat(d.type, 0.0), contribution)
        g.add_adjoint(b, op, contribution)


def reverse_call(g, inst, block, b) -> None:
    from ..analysis.activity import differentiated
    from . import calls
    if differentiated(g.act, inst):
        calls.reverse_call(g, inst, block, b)
        return
    if g.act.has_shadow(inst):  # an allocation's data pointer: its shadow is freed at the end
        return
    from ..rules.blas import DOTS
    if inst.callee_name in DOTS:
        from .blas import reverse_dot
        reverse_dot(g, inst, block, b)
        return
    name = inst.callee_name
    if name.startswith(("llvm.memset", "llvm.memcpy", "llvm.memmove")):
        memory.reverse_memory_intrinsic(g, inst, block, b)
        return
    rule = lookup(name) if name else None
    if rule is not None and rule.inactive:
        return
    touches_shadow = any(g.act.has_shadow(o) for o in inst.ops)
    varying_args = [o for o in inst.ops if id(o) in g.act.varying]
    if rule is not None and not touches_shadow:
        if g.act.is_active(inst):
            apply_rule(g, rule, inst, block, b)
        return
    if not name:
        what = "indirect call through a function pointer"
    elif name in g.module.functions:
        what = f"call to external function `{name}`"
    else:
        what = f"call through the function pointer in `@{name}` (an external C function)"
    if touches_shadow:
        raise g.unsupported(f"{what} with differentiable memory", inst,
                            "Register a derivative for it, or make it an @njit function.")
    writes_memory = any(kind(o.type) == "ptr" for o in inst.ops)
    if varying_args and (g.act.is_active(inst) or writes_memory or id(inst) in g.act.useful):
        raise g.unsupported(f"{what} has no derivative rule", inst, "Register a derivative for it.")


def reverse_extract(g, inst, block, b) -> None:
    if g.act.is_active(inst) or any(g.act.is_active(o) for o in inst.ops):
        raise g.unsupported(f"`{inst.opcode}` on float aggregates", inst)


def reverse_opaque(g, inst, block, b) -> None:
    name = inst.flags[0] if inst.flags else "?"
    if any(g.act.has_shadow(o) or g.act.is_active(o) for o in inst.ops):
        raise g.unsupported("atomic instruction" if name in ("atomicrmw", "cmpxchg")
                            else f"instruction `{name}`", inst)


HANDLERS = {
    "load": memory.reverse_load,
    "store": memory.reverse_store,
    "call": reverse_call,
    "extractvalue": reverse_extract,
    "insertvalue": reverse_extract,
    "opaque": reverse_opaque,
}

__all__ = ["reverse_instruction", "ConstFloat", "T"]
