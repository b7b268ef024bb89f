"""Deferred shadow accumulation: `shadow(p) += d` in a reverse loop, kept in a register.

A load inside loop L from an address p defined outside L adds its adjoint into the same shadow
location on every reverse iteration. When nothing in L reads or zeroes shadow memory that may
alias p (no store, memcpy or memset into it, no call whose reverse could), those additions
commute with everything else L's reverse does to that memory, so they go into a slot instead
and the slot is added into shadow(p) once, when the reverse sweep leaves L (the reverse of L's
entry edge). This is what LICM's scalar promotion would do if the accumulation ran on every
iteration; it cannot when the load is conditional. Order of accumulation is not part of the
contract (docs/semantics.md).
"""
from __future__ import annotations

from ....ir.instructions import Instruction
from ....ir.values import ConstFloat
from ....rules.effects import pure_math, writes_nothing


def _invariant(p, loop) -> bool:
    return not isinstance(p, Instruction) or p.block not in loop.blocks


def _quiet(g, loop, p) -> bool:
    """Does nothing in `loop` read or overwrite shadow memory that may alias p in reverse?"""
    if loop in g.deferred_quiet.get(id(p), {}):
        return g.deferred_quiet[id(p)][loop]
    quiet = True
    for blk in loop.blocks:
        for inst in blk.instructions:
            op = inst.opcode
            if op == "store":
                q = inst.ops[1]
            elif op == "call":
                name = inst.callee_name or ""
                if name.startswith(("llvm.memcpy", "llvm.memmove", "llvm.memset")):
                    q = inst.ops[0]
                elif pure_math(inst) or writes_nothing(name):
                    continue
                else:
                    quiet = False
                    break
            else:
                continue
            if g.act.has_shadow(q) and g.alias.may_alias(p, q):
                quiet = False
                break
        if not quiet:
            break
    g.deferred_quiet.setdefault(id(p), {})[loop] = quiet
    return quiet


def slot_for(g, inst, block):
    """The slot collecting the adjoints of load `inst` (in primal block `block`), or None when
    they must go to memory at once."""
    p = inst.ops[0]
    loop, chosen = g.loops.loop_of(block), None
    while loop is not None and loop not in g.fused and _invariant(p, loop) and _quiet(g, loop, p):
        chosen, loop = loop, loop.parent
    if chosen is None:
        return None
    key = (chosen, id(p), str(inst.type))
    if key not in g.deferred:
        t = g.updates.adjoint_type(inst.type)
        slot = g.alloca_builder.alloca(t, "acc." + (getattr(p, "name", "") or "p"))
        g.alloca_builder.store(ConstFloat(t, 0.0), slot)
        g.deferred[key] = (slot, p, inst.type, inst.align)
    return g.deferred[key][0]


def flush(g, loop, src, b) -> None:
    """Add the slots of `loop` into their shadows and zero them: the reverse sweep leaves the
    loop through the reverse of its entry edge from `src`."""
    for (lp, _, _), (slot, p, ty, align) in list(g.deferred.items()):
        if lp is not loop:
            continue
        t = g.updates.adjoint_type(ty)
        d = b.load(t, slot)
        b.store(ConstFloat(t, 0.0), slot)
        sp = g.avail.shadow(p, src, b)
        g.updates.accumulate(b, p, sp, d, align, ty=ty)
