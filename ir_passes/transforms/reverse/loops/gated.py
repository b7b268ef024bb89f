"""Gated loops: the reverse of a loop is skipped when every adjoint it could receive is zero by
a select's choice.

`best = min(best, s)` after a loop that computes s is `select (s < best), s, best`. The reverse
of the select gives s the adjoint `select c, d, 0`: exactly zero whenever c is false, and so is
everything the reverse of the loop would add (each of its contributions is a product with an
adjoint the loop's own code carries from s; the strong zero, docs/semantics.md, makes 0 * inf
count as 0). A nearest-centroid search over k centroids then reverses one distance loop per point
instead of k.

The reverse sweep tests the gates where it enters loop L backwards (the reverse of L's exit
edge) and, when none holds, goes straight to the reverse of L's entry edge with L's counter at
its start. The gate is a primal value, never a test of an adjoint for zero, so the code stays
right when it is differentiated again: forward mode over the gradient (a Hessian-vector product)
sees the tangent of `select c, d, 0` zero too when c is false, where an adjoint that is zero at
the point may still have a nonzero derivative.

L qualifies when:
- it nests no loop (their counters could not be rewound), is not fused, has one entry edge and
  one latch and leaves to one block X;
- it writes nothing: no store, no call but pure math and calls that write nothing (the reverse
  of a store reads and clears shadow memory, which may hold adjoints from elsewhere);
- every use outside L of an active value defined in L is a comparison (no adjoint), a phi in X
  whose uses qualify in turn, or one arm (not both) of a select in X: the select's condition
  and arm are the gate.
"""
from __future__ import annotations

from dataclasses import dataclass

from ....ir import types as T
from ....ir.values import ConstInt
from ....rules.effects import pure_math, writes_nothing
from ..shadows.memory import users


@dataclass(frozen=True)
class Gate:
    """L's reverse runs only when `condition` (a primal i1) equals `taken`."""
    condition: object
    taken: bool


def gated_loops(g) -> dict:
    """Loop -> (exit block X, its gates), for every loop whose reverse may be skipped."""
    out = {}
    for lp in g.loops.loops:
        exits = {s for blk in lp.blocks for s in blk.successors() if s not in lp.blocks}
        if lp.children or lp in g.fused or len(lp.latches) != 1 or len(exits) != 1:
            continue
        if len([p for p in g.preds[lp.header] if p not in lp.blocks]) != 1 or not _writes_nothing(lp):
            continue
        exit_block = exits.pop()
        gates = _gates(g, lp, exit_block)
        if gates:
            out[lp] = (exit_block, gates)
    return out


def _writes_nothing(lp) -> bool:
    for blk in lp.blocks:
        for inst in blk.instructions:
            if inst.opcode in ("store", "atomicrmw", "cmpxchg", "fence", "opaque", "alloca"):
                return False
            if inst.opcode == "call" and not (pure_math(inst) or writes_nothing(inst.callee_name or "")):
                return False
    return True


def _gates(g, lp, exit_block) -> list | None:
    """The gates of every active value L defines, or None when an adjoint may leave ungated."""
    gates: list = []
    for blk in lp.blocks:
        for inst in blk.instructions:
            if g.act.is_active(inst) and not _gated(g, inst, lp, exit_block, gates, set()):
                return None
    return gates


def _gated(g, v, lp, exit_block, gates, seen) -> bool:
    """Add the gates of v's uses outside L to `gates`; False when one use is not gated."""
    if id(v) in seen:
        return True
    seen.add(id(v))
    for u in users(g, v):
        if u.block in lp.blocks:
            if v.block not in lp.blocks:
                return False        # a phi of X used back in L
            continue
        if u.opcode in ("fcmp", "icmp"):
            continue
        if u.block is not exit_block:
            return False
        if u.opcode == "phi":
            if not _gated(g, u, lp, exit_block, gates, seen):
                return False
        elif u.opcode == "select" and u.ops[0] is not v and (u.ops[1] is v) != (u.ops[2] is v):
            gate = Gate(u.ops[0], u.ops[1] is v)
            if gate not in gates:
                gates.append(gate)
        else:
            return False
    return True


def run_test(g, gates, exit_block, b):
    """The i1 that is true when L's reverse must run: one of its gates holds. Emitted where the
    reverse sweep enters L, before L's counter steps back (a condition defined in L is read at
    L's last iteration)."""
    run = None
    for gate in gates:
        c = g.avail.primal(gate.condition, exit_block, b)
        if not gate.taken:
            c = b.binop("xor", c, ConstInt(T.i1, 1))
        run = c if run is None else b.binop("or", run, c)
    return run
