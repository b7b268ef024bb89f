"""Fused loops: a loop whose iterations are independent is reversed one iteration at a time,
right after that iteration runs, instead of in a second loop after the whole forward sweep.

This is right when the reverse of iteration k needs nothing that a later iteration, or code after
the loop, provides or changes:
- nothing after the loop is differentiated (no active value, no store into shadowed memory, no
  differentiated call), and every return after it is a success, so no error can follow an
  iteration whose derivatives are already in the shadows;
- the loop carries no active value from one iteration to the next (its header phis are inactive);
- the loop has no exit but its latch's, and no error path;
- every store into shadowed memory writes one location per iteration (base + an injective
  function of the induction variable), and every other access to memory that may alias it is to
  the same location in the same iteration; loads from memory no store of the loop touches may
  read anything (their adjoints only accumulate);
- no load outside the loop may read what the loop overwrites (the reverse sweep would have to
  undo those stores after the forward sweep, and fused iterations have already been reversed);
- calls are pure math only.
The forward sweep's latch then jumps into the reverse of the iteration, whose end continues the
forward loop; the reverse sweep passes over the loop. Values of the iteration are read straight
from the forward code where they dominate the latch. One pass over memory instead of two, and
the primal and derivative math of an element sit side by side (sin and cos of one argument
become one sincos).
Only loops that are neither nested nor nest others, in a top-level gradient, are fused.
"""
from __future__ import annotations

from ....analysis.activity import differentiated
from ....ir.instructions import Instruction
from ....ir.values import ConstInt
from ....options import CacheMode
from ....rules.effects import pure_math, writes_nothing
from ....rules.registry import lookup
from ..calls.success import always_succeeds


def fused_loops(g, reaching_success) -> set:
    if g.split or g.cache_mode is CacheMode.ALWAYS:
        return set()
    return {lp for lp in g.loops.loops
            if lp.parent is None and not lp.children and _qualifies(g, lp, reaching_success)}


def _qualifies(g, lp, reaching_success) -> bool:
    if len(lp.latches) != 1 or not lp.blocks <= reaching_success:
        return False
    latch, header = lp.latches[0], lp.header
    if len([p for p in g.preds[header] if p not in lp.blocks]) != 1:
        return False
    exits = [(a, s) for a in lp.blocks for s in a.successors() if s not in lp.blocks]
    if len(exits) != 1 or exits[0][0] is not latch:
        return False
    if any(g.act.is_active(phi) or g.act.has_shadow(phi) for phi in header.phis()):
        return False
    ivs = [phi for phi in header.phis() if g.avail.induction_parts(phi) is not None]
    return (_quiet_after(g, exits[0][1], lp) and _calls_pure(g, lp)
            and _independent(g, lp, ivs))


def _quiet_after(g, start, lp) -> bool:
    seen, work = {start}, [start]
    while work:
        blk = work.pop()
        for inst in blk.instructions:
            op = inst.opcode
            if op == "ret":
                if not always_succeeds(g.module, inst, g.success_codes):
                    return False
            elif g.act.is_active(inst) and not inst.type.is_ptr:
                return False
            elif op == "store" and g.act.has_shadow(inst.ops[1]):
                return False
            elif op == "call" and (differentiated(g.act, inst) or
                                   any(g.act.has_shadow(o) for o in inst.ops)):
                return False
        for s in blk.successors():
            if s in lp.blocks:
                return False
            if s not in seen:
                seen.add(s)
                work.append(s)
    return True


def _calls_pure(g, lp) -> bool:
    for blk in lp.blocks:
        for inst in blk.instructions:
            if inst.opcode == "call":
                name = inst.callee_name or ""
                rule = lookup(name) if name else None
                if not (pure_math(inst) or writes_nothing(name)
                        or (rule is not None and rule.inactive and not rule.mirror)):
                    return False    # a barrier (mirror) pairs with its reverse across threads
            elif inst.opcode == "alloca" or inst.opcode == "opaque" and inst.flags and \
                    inst.flags[0] in ("atomicrmw", "cmpxchg", "fence"):
                return False
    return True


def _independent(g, lp, ivs) -> bool:
    accesses = [(i, i.ops[0] if i.opcode == "load" else i.ops[1])
                for blk in lp.blocks for i in blk.instructions if i.opcode in ("load", "store")]
    stores = [(i, p) for i, p in accesses if i.opcode == "store"]
    for s, q in stores:
        if not g.act.has_shadow(q):
            continue
        if not _one_slot_per_iteration(q, lp, ivs):
            return False
        for a, p in accesses:
            if a is not s and g.alias.may_alias(p, q) and not _same_slot(p, q):
                return False
    for blk in g.dom.order:
        if blk in lp.blocks:
            continue
        for i in blk.instructions:
            if i.opcode == "load" and any(g.alias.may_alias(i.ops[0], q) for _, q in stores):
                return False
    return True


def _same_slot(p, q) -> bool:
    if p is q:
        return True
    return (isinstance(p, Instruction) and isinstance(q, Instruction)
            and p.opcode == q.opcode == "getelementptr" and str(p.source_type) == str(q.source_type)
            and len(p.ops) == len(q.ops) and all(a is b for a, b in zip(p.ops, q.ops)))


def _one_slot_per_iteration(q, lp, ivs) -> bool:
    """q = gep(invariant base, invariant..., f(iv)) with f injective: a new slot each iteration."""
    if not (isinstance(q, Instruction) and q.opcode == "getelementptr"):
        return False
    if _varies(q.ops[0], lp):
        return False
    varying = [o for o in q.ops[1:] if _varies(o, lp)]
    return len(varying) == 1 and _injective(varying[0], ivs)


def _varies(v, lp) -> bool:
    return isinstance(v, Instruction) and v.block in lp.blocks


def _injective(v, ivs) -> bool:
    if v in ivs:
        return True
    if not isinstance(v, Instruction):
        return False
    if v.opcode in ("sext", "zext"):
        return _injective(v.ops[0], ivs)
    if v.opcode in ("add", "sub") and isinstance(v.ops[1], ConstInt):
        return _injective(v.ops[0], ivs)
    if v.opcode == "add" and isinstance(v.ops[0], ConstInt):
        return _injective(v.ops[1], ivs)
    if v.opcode in ("mul", "shl") and isinstance(v.ops[1], ConstInt) and v.ops[1].value != 0 \
            and "nsw" in v.flags:
        return _injective(v.ops[0], ivs)
    return False
