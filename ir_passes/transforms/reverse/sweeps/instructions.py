"""The reverse of one instruction. Dispatch by opcode; arithmetic goes through the rule table."""
from __future__ import annotations

from ....analysis.activity import differentiated
from ....analysis.types import kind
from ....ir.builder import RuleBuilder
from ....rules.blas import lookup_blas
from ....rules.effects import constructor_out, copy_in_operands, copy_out_operands, refusal, call_hint
from ....rules.partials import Operands, contribution
from ....rules.registry import lookup
from ...common.atomics import reverse_atomic
from ..calls import calls
from ..shadows import memory
from ..tape.availability import Lazy
from ..shadows.growing import reverse_move
from ..parallel.parallel_launch import launches, reverse_launch

NO_ADJOINT = {"phi"}  # phi adjoints move along edges (reverse_sweep.py)


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


def apply_rule(g, rule, inst, block, b) -> None:
    """adj[x_k] += adj[inst] * partial_k for every active operand x_k (rules/partials.py)."""
    d = g.take_adjoint(b, inst)
    if rule.zero:
        return
    x = Operands(inst, lambda v: g.avail.primal(v, block, b),
                 lambda call: g.avail.primal(call, block, b))
    y = Lazy(inst.type, lambda: g.avail.primal(inst, block, b))
    nonzero = None
    rb = RuleBuilder(b)
    for k, op in enumerate(inst.ops):
        if not g.act.is_active(op):
            continue
        if rule.partial(k) is None:
            raise g.unsupported(f"`{rule.key}` has no derivative with respect to operand {k}", inst)
        c, nonzero = contribution(rule, k, b, rb, d, x, y, nonzero)
        g.add_adjoint(b, op, c)


def reverse_call(g, inst, block, b) -> None:
    if differentiated(g.act, inst):
        calls.reverse_call(g, inst, block, b)
        return
    if launches(g, inst):
        reverse_launch(g, inst, block, b)
        return
    if id(inst) in g.fwd.moves:  # a reallocation that moved a shadow: the adjoints move back
        reverse_move(g, inst, block, b)
        return
    if g.act.has_shadow(inst):  # an allocation's data pointer: its shadow is freed at the end
        return
    blas = lookup_blas(inst.callee_name)
    if blas is not None:
        blas.reverse(g, inst, block, b)
        return
    rule = lookup(inst.callee_name) if inst.callee_name else None
    if rule is not None and rule.lanes is not None:   # a warp shuffle (rules/nvptx.py)
        rule.lanes.reverse(g, inst, block, b)
        return
    if constructor_out(inst) is not None:
        return       # the shadow object is released when the gradient ends
    pair = copy_in_operands(inst)
    if pair is not None and g.act.has_shadow(pair[0]):
        if g.types.float_type_behind(pair[1]) is not None:
            raise g.unsupported("floats copied into a container that receives differentiable "
                                "data (a list of floats built in the kernel)", inst)
        return       # pointers with shadows only: adjoints go through them
    pair = copy_out_operands(inst)
    if pair is not None and g.act.has_shadow(pair[0]):
        if g.types.float_type_behind(pair[1]) is not None:
            raise g.unsupported("floats copied out of a container that holds differentiable "
                                "data (a dict of floats)", inst)
        return
    name = inst.callee_name
    if name.startswith(("llvm.memset", "llvm.memcpy", "llvm.memmove")):
        memory.reverse_memory_intrinsic(g, inst, block, b)
        return
    rule = lookup(name) if name else None
    if rule is not None and rule.mirror:   # a barrier: its reverse is itself (rules/nvptx.py)
        again = inst.copy()
        again.name = ""
        again.ops = [g.avail.primal(o, block, b) for o in inst.ops]
        b.emit(again)
        return
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
        raise g.unsupported(f"{what} with differentiable memory{refusal(name or '')}", inst,
                            call_hint(name or ""))
    writes_memory = any(kind(o.type) == "ptr" for o in inst.ops)
    if varying_args and (g.act.is_active(inst) or writes_memory or id(inst) in g.act.useful):
        raise g.unsupported(f"{what} has no derivative rule", inst, "Register a derivative for it.")


def reverse_extract(g, inst, block, b) -> None:
    if g.act.is_active(inst) or any(g.act.is_active(o) for o in inst.ops):
        raise g.unsupported(f"`{inst.opcode}` on float aggregates", inst)


def reverse_opaque(g, inst, block, b) -> None:
    if reverse_atomic(g, inst, block, b):
        return
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
