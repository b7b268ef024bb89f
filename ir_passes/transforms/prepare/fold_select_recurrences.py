"""Fold held selects into closed forms, before AD (the pass fold-select-recurrences).

A host's broadcasting loop keeps one index per operand and advances it only along the axes the
operand is not broadcast on:

    %k = phi [ %init, %outside ], [ %k1, %latch ]
    %k1 = select i1 %c, %i, %k           ; %c fixed for the call: "this axis is not broadcast"
                                         ; (or select %c, %k, %i)

When %c is false, %k1 holds %k, which holds %init: every value of the recurrence is %init. When %c
is true, %k1 is %i. So %k1 is `select %c, %i, %init`. In a loop nest the held value travels
through more phis (the outer loop's phi, the inner loop's exit phi) before it comes back: the same
holds when every phi reached from %k takes only values of those phis, the select, or one initial
value. The primal computes the same values, but the reverse sweep recomputes the index from %i
instead of reading every iteration's value from the tape (a carried index is a recurrence it
cannot rebuild). The phis keep their other users.

Conditions: %c a constant, a parameter or an instruction outside every loop (computed once per
call); %init a constant, a parameter or an instruction that dominates the select; %i any value.
"""
from __future__ import annotations

from ...analysis.dominators import dominators
from ...analysis.loops import loop_info
from ...ir.instructions import Instruction

MAX_PHIS = 8     # phis a held value may travel through (a loop nest's depth, twice)


def fold_select_recurrences(fn) -> int:
    """Rewrite each held select `select %c, %x, %phi` as `select %c, %x, %init`; return how
    many."""
    loops, dom = loop_info(fn), dominators(fn)
    count = 0
    for sel in list(fn.instructions()):
        if sel.opcode != "select" or loops.loop_of(sel.block) is None:
            continue
        cond = sel.ops[0]
        if isinstance(cond, Instruction) and loops.loop_of(cond.block) is not None:
            continue
        for arm in (1, 2):
            init = _held_value(sel, sel.ops[arm])
            if init is not None and _dominates(dom, init, sel):
                sel.ops[arm] = init
                count += 1
                break
    return count


def _held_value(sel, held):
    """The one initial value of the phis `held` reaches through phis (values of which are only
    those phis, `sel` or that initial value), or None."""
    if getattr(held, "opcode", None) != "phi":
        return None
    phis, work, outside = {id(held)}, [held], []
    while work:
        for v in work.pop().ops:
            if v is sel or id(v) in phis:
                continue
            if getattr(v, "opcode", None) == "phi":
                if len(phis) == MAX_PHIS:
                    return None
                phis.add(id(v))
                work.append(v)
            elif not any(v is o for o in outside):
                outside.append(v)
    return outside[0] if len(outside) == 1 else None


def _dominates(dom, v, inst) -> bool:
    return not isinstance(v, Instruction) or (v.block is not inst.block and
                                              dom.dominates(v.block, inst.block))
