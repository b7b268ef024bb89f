"""Integer recurrences run backwards in the reverse sweep instead of being taped.

A loop-header phi `p = phi [init, outside], [next, latch]` of integer type is not an induction
variable when its step changes from one iteration to the next. GMM's packed index `li` grows by
the trip count of the inner loop: `next` is the inner counter's exit value, or p itself when the
inner loop is skipped. Taping p costs 8 bytes per iteration. But when next - p (the step) can be
computed in the reverse sweep from values it has anyway, p can run backwards: the reverse sweep
keeps p in a frame field, sets it from the tape once when it enters the loop (p in the last
iteration), and subtracts the step each time it goes back one iteration.

The step, d(v) = v - p for the latch's incoming value v, is known for
- p itself: 0;
- `add a, c` / `sub a, c` with d(a) known and c available in the reverse sweep;
- a phi where an if/else joins (analysis/branches.py): the condition picks its arm's step;
- the exit value of an induction variable of a loop nested directly in p's loop, whose initial
  value has a known step and whose trip count is exact (tripcount.exact_trip): d(init) + step·N
  for the increment, d(init) + step·(N - 1) for the phi.
"""
from __future__ import annotations

from ....analysis.branches import branch_join
from ....analysis.tripcount import induction
from ....ir import types as T
from ....ir.builder import MathBuilder
from ....ir.instructions import Instruction
from ....ir.values import ConstInt
from .plan import Plan
from .tape_keys import LastValue


def recurrence_loop(g, p):
    """The loop p runs backwards in, or None when p is not such a recurrence."""
    if p.opcode != "phi" or not isinstance(p.type, T.IntType) or len(p.ops) != 2:
        return None
    loop = g.loops.header_loop(p.block)
    if loop is None or not has_candidates(g, loop):
        return None
    inside = [b for b in p.blocks if b in loop.blocks]
    if inside != loop.latches:
        return None
    return loop if _step(g, p, loop, p.incoming(loop.latches[0]), None) is not None else None


def has_candidates(g, loop) -> bool:
    """Can a phi of this loop's header run backwards? (Then its reverse edges get markers.)"""
    return loop not in g.fused and not g.split and len(loop.latches) == 1 and any(
        isinstance(p.type, T.IntType) and len(p.ops) == 2 for p in loop.header.phis())


def step(g, p, loop, b):
    """Emit next - p for the iteration the reverse sweep is in."""
    return _step(g, p, loop, p.incoming(loop.latches[0]), b)


def _step(g, p, loop, v, b, arm=False):
    """d(v) = v - p; with b None only whether it is known (non-None), else emitted with b.
    arm: v is one side of a select, evaluated whichever way the branch went: no loads then."""
    zero = ConstInt(p.type, 0)
    if v is p:
        return zero
    if not isinstance(v, Instruction):
        return None
    latch = loop.latches[0]
    if v.opcode in ("add", "sub"):
        pairs = [(v.ops[0], v.ops[1])] + ([(v.ops[1], v.ops[0])] if v.opcode == "add" else [])
        for a, c in pairs:
            if not _leaf(g, c, loop, arm):
                continue
            d = _step(g, p, loop, a, b, arm)
            if d is None:
                continue
            if b is None:
                return d
            cv = g.avail.primal(c, latch, b)
            return b.add(d, cv) if v.opcode == "add" else b.sub(d, cv)
        return None
    if v.opcode == "phi" and v.block is not loop.header and g.loops.loop_of(v.block) is loop:
        joined = branch_join(g.dom, g.preds, v.block)
        if joined is None or not _leaf(g, joined[0], loop, arm):
            return None
        cond, t_pred, f_pred = joined
        dt = _step(g, p, loop, v.incoming(t_pred), b, True)
        df = _step(g, p, loop, v.incoming(f_pred), b, True)
        if dt is None or df is None:
            return None
        return zero if b is None else b.select(g.avail.primal(cond, latch, b), dt, df)
    inner = g.loops.loop_of(v.block)
    if inner is not None and inner.parent is loop and g.exact_trips.get(inner) is not None:
        iv = induction(v, inner)
        if iv is None:
            return None
        phi, s = iv
        init = [x for x, blk in zip(phi.ops, phi.blocks) if blk not in inner.blocks][0]
        et = g.exact_trips[inner]
        if not (_leaf(g, et.init, loop, arm) and _leaf(g, et.bound, loop, arm)):
            return None
        d = _step(g, p, loop, init, b, arm)
        if d is None or b is None:
            return d
        n = g.exact_trip_count(inner, latch, b)
        if v is phi:
            n = b.sub(n, ConstInt(T.i64, 1))
        if p.type.bits < 64:
            n = b.cast("trunc", n, p.type)
        return b.add(d, b.mul(n, ConstInt(p.type, s)))
    return None


def _leaf(g, c, loop, arm=False) -> bool:
    """Can the reverse sweep have c for the iteration it is in without the tape, and without
    another recurrence of the same loop (whose field may be mid-update)? On a select's arm
    (`arm`) c must not need a load: that arm's address may not be valid this iteration."""
    if not isinstance(c, Instruction):
        return True
    if c.opcode == "phi" and c.block is loop.header:
        return g.avail.plan(c) is Plan.INDUCTION
    lp = g.loops.loop_of(c.block)
    if lp is None or lp is not loop and loop not in lp.ancestors():
        return True                              # defined outside the loop: a slot
    how = g.avail.plan(c)
    if not arm:
        return how in (Plan.RECOMPUTE, Plan.INDUCTION, Plan.RELOAD)
    return how is Plan.INDUCTION or how is Plan.RECOMPUTE and all(_leaf(g, o, loop, True) for o in c.ops)


def field(g, p):
    """The frame field holding p for the iteration the reverse sweep is in."""
    if p not in g.recurrence_fields:
        g.recurrence_fields[p] = g.tape.new_field(p.type)
    return g.recurrence_fields[p]


def mark(g, kind, loop, src, b):
    """Leave a place where `fill` puts the updates of `loop`'s recurrences: on entering it
    backwards ("enter") or going back one iteration ("back"). Returns the builder to go on
    with: a back edge gets a fresh block, so that no value fetched for the later iteration is
    reused there."""
    if not has_candidates(g, loop):
        return b
    if kind == "back":
        nxt = g.new_block(f"rev.recur.{loop.header.name}.{src.name}")
        b.br(nxt)
        b = MathBuilder(g.module, nxt)
    m = b.emit(Instruction("marker"))
    g.recurrence_markers.append((kind, loop, src, m))
    return b


def fill(g) -> None:
    """Replace the markers with the updates of the recurrences the reverse sweep used."""
    for kind, loop, src, m in g.recurrence_markers:
        ps = [p for p, lp in g.recurrences.items() if lp is loop]
        g.splice(m, lambda b, ps=ps, kind=kind, loop=loop, src=src:
                 _update(g, ps, kind, loop, src, b))


def _update(g, ps, kind, loop, src, b) -> None:
    for p in ps:
        f = field(g, p)
        if kind == "enter":       # p in the last iteration: one tape slot per entry
            e = g.tape.entry(LastValue(p, loop.parent), p.type, loop.parent,
                             "a recurrence's value in its loop's last iteration", source=p)
            g.cache_sites.setdefault(e, p)
            g.tape.store(b, g.tape.read(b, e, src), f)
        else:
            g.tape.store(b, b.sub(g.tape.load(b, f), step(g, p, loop, b)), f)
