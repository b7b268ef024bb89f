"""Keep a counted time loop beside its checkpointed call, and choose between them on entry.

Under memory="auto" a loop is checkpointed only when its full tape would not fit the budget.
The full tape is estimated on entry as the loop's trip bound times S, the bytes of one snapshot
of its state (what a step overwrites). The kernel then reads

    choose:  fits = bound * S <= budget      (bound: trips.py's; none is no fit)
             br fits, header (the loop as it was: the full tape), ckpt.N (the call)

and reverse mode differentiates both branches as it would any branch: the loop with its tape,
the call from snapshots. A checkpointed loop under "auto" runs in segments: k steps per call of
the outlined step (outline.py), k = (cache / 4) / S, so that a segment's own tape (about k x S)
stays in the last-level cache, with one snapshot per segment; k = 1 when two steps' tapes
overflow that share, and with a size given. The full tape is kept whenever it fits, even when
it does not fit the cache: measured on the heat workload (docs/checkpointing.md), streaming the
tape overlaps the reverse sweep's arithmetic, and the segments' second forward costs more than
the traffic it saves. `choose` leaves in the loop's figures (the stats global) whether this
call kept the full tape, the bound and S; the call's block leaves k and the cache. Loops
without a trip bound (while loops) are always checkpointed.
"""
from __future__ import annotations

from ....analysis.dominators import dominators
from ....analysis.tripcount import exact_trip, trip_bound
from ....ir import types as T
from ....ir.builder import MathBuilder
from ....ir.module import Block
from ....ir.values import ConstInt, Global
from ..trips import bound_steps
from .state import snapshot_bytes

# the stats global's fields (i64 each), written by the reverse (emit.py) and by `choose`
STAT_FIELDS = ("n", "c", "S", "recomputed", "peak", "tape", "k", "cache")


def exact_steps(b, et):
    """The exact step count of analysis/tripcount.py's ExactTrip `et`, an i64 built with b."""
    zero, one = ConstInt(T.i64, 0), ConstInt(T.i64, 1)
    d = b.sub(et.bound, et.init)
    if et.step < 0:
        d = b.sub(zero, d)
    if not et.strict:
        return b.add(d, one) if et.on_phi else d
    low = one if not et.on_phi else zero
    d = b.select(b.icmp("slt", d, low), low, d)
    return b.add(d, one) if et.on_phi else d


def trip_estimate(fn, lp):
    """(exact, bound) of loop lp: its ExactTrip over all exits (or None), and its TripBound."""
    dom = dominators(fn)
    return exact_trip(lp, set(dom.order)), trip_bound(lp, dom)


def store_segment(module, call_block, values, tl) -> None:
    """In `call_block`, before the call of the loop: the segment length k into the carry
    (min(share, budget / 2) / S, or 1 when that is under 2 or the loop is not segmented),
    and into the stats."""
    blk = Block("tmp", call_block.function)
    b = MathBuilder(module, blk)
    k = ConstInt(T.i64, 1)
    if tl.share:
        room = ConstInt(T.i64, min(tl.share, tl.budget // 2))
        k = b.binop("udiv", room, snapshot_bytes(b, values, tl), "segment")
        k = b.select(b.icmp("ult", k, ConstInt(T.i64, 2)), ConstInt(T.i64, 1), k)
    carry = values[-1]
    b.store(k, b.gep(T.i8, carry, [ConstInt(T.i64, tl.carry_bytes - 16)]))
    if tl.stats:
        g = Global(T.ptr, tl.stats)
        b.store(k, b.gep(T.i64, g, [ConstInt(T.i64, STAT_FIELDS.index("k"))]))
        b.store(ConstInt(T.i64, tl.cache),
                b.gep(T.i64, g, [ConstInt(T.i64, STAT_FIELDS.index("cache"))]))
    at = next(j for j, i in enumerate(call_block.instructions)
              if i.opcode == "call" and i.callee_name == tl.name)
    for j, i in enumerate(blk.instructions):
        call_block.insert(at + j, i)


def add_choice(module, fn, lp, pre, call_block, values, tl, bound) -> None:
    """Insert `choose` between the preheader `pre` and the loop: the loop when the estimated
    full tape fits tl.budget, else `call_block`. `values`: the step's parameters as values of
    the kernel (its parameters, the live-ins, the carry)."""
    blk = Block("ckpt.choose." + tl.name.rsplit(".", 1)[-1], fn)
    b = MathBuilder(module, blk)
    zero = ConstInt(T.i64, 0)
    steps = bound_steps(b, bound)
    size = snapshot_bytes(b, values, tl)
    room = b.binop("udiv", ConstInt(T.i64, tl.budget), size)
    fits = b.icmp("ule", steps, room, "tape.fits")
    if tl.stats:
        g = Global(T.ptr, tl.stats)
        flag = b.cast("zext", fits, T.i64)
        b.store(flag, b.gep(T.i64, g, [ConstInt(T.i64, STAT_FIELDS.index("tape"))]))
        b.store(b.select(fits, steps, zero), g)
        b.store(size, b.gep(T.i64, g, [ConstInt(T.i64, STAT_FIELDS.index("S"))]))
    b.cbr(fits, lp.header, call_block)
    pre.terminator.replace_successor(lp.header, blk)
    for phi in lp.header.phis():
        phi.blocks = [blk if x is pre else x for x in phi.blocks]
    fn.blocks.insert(fn.blocks.index(lp.header), blk)
