"""Keep a counted time loop beside its checkpointed call, and choose between them on entry.

Under memory="auto" a counted loop keeps its full tape when that tape fits the last-level
cache, or when recomputing its steps would cost more than the tape's traffic saves, and always
within the budget. The full tape is estimated on entry as the loop's trip bound times S, the
bytes of one snapshot of its state (what a step overwrites). The kernel then reads

    choose:  fits = bound * S <= budget  and  (bound * S <= cache / 2  or  costly)
             br fits, header (the loop as it was: the full tape), ckpt.N (the call)

(bound: trips.py's; none is no fit) and reverse mode differentiates both branches as it would
any branch: the loop with its tape, the call from snapshots. `costly` is decided when the
gradient is built, per loop, from the step's code and the machine's memory bandwidth
(`recompute_model`): recomputing a step costs one plain run of it, estimated at T_OP_PS per
operation (a call to a math function counts MATH_OPS, a division DIV_OPS; blocks of loops
nested in the step weigh NEST times more per level); checkpointing saves the tape's write and
read back (2 bytes of traffic per tape byte at the bandwidth), less what the reverse sweep
hides under its own work (twice the step's operations). Both per byte the step stores (a tape
byte, as the estimate above counts it), so the choice does not depend on the trip count:

    costly = ops/byte * T_OP_PS >= 2 / bandwidth - 2 * ops/byte * T_OP_PS

Without the cache's size or the bandwidth (a Memory given by hand) `costly` holds: the full
tape whenever it fits the budget. A checkpointed loop under "auto" runs in segments: k steps
per call of the outlined step (outline.py), k = (cache / 4) / S, so that a segment's own tape
(about k x S) stays in the last-level cache, with one snapshot per segment; k = 1 when two
steps' tapes overflow that share, and with a size given. `choose` leaves in the loop's figures
(the stats global) whether this call kept the full tape and why, the bound, S and the model's
figures; the call's block leaves k and the cache. Loops without a trip bound (while loops) are
always checkpointed.
"""
from __future__ import annotations

from .....analysis.dominators import dominators
from .....analysis.loops import loop_info
from .....analysis.tripcount import exact_trip, trip_bound
from .....ir import types as T
from .....ir.builder import MathBuilder
from .....ir.module import Block
from .....ir.values import ConstInt, Global
from ..trips import bound_steps
from .state import snapshot_bytes

# the stats global's fields (i64 each), written by the reverse (emit.py) and by `choose`:
# `why` (WHY's index), the model's picoseconds per tape byte: recomputation, traffic saved
STAT_FIELDS = ("n", "c", "S", "recomputed", "peak", "tape", "k", "cache", "why", "recompute_ps",
               "traffic_ps")
WHY = ("over the budget", "fits the cache", "recomputation costs more", "recomputation is cheaper",
       "fits the budget")

T_OP_PS = 250        # picoseconds per operation of a plain step (one a cycle at 4 GHz)
MATH_OPS = 20        # a call (a math function, a helper)
DIV_OPS = 8          # a division, a square root
NEST = 8             # iterations assumed for a loop nested in the step
MATH = ("exp", "log", "pow", "sin", "cos", "tan", "erf", "gamma", "cbrt", "hypot")


def step_intensity(fn, lp) -> float:
    """Weighted operations per byte stored in the body of loop lp (recompute_model)."""
    depth = {}
    for inner in loop_info(fn).loops:
        if inner.header in lp.blocks:
            for x in inner.blocks:
                depth[x] = max(depth.get(x, 0), inner.depth)
    ops = stored = 0.0
    for x in lp.blocks:
        w = float(NEST ** max(0, depth.get(x, lp.depth) - lp.depth))
        for i in x.instructions:
            if i.opcode == "phi":
                continue
            ops += w * _ops(i)
            if i.opcode == "store":
                stored += w * max(1, T.size_of(i.ops[0].type))
    return ops / stored if stored else float("inf")


def _ops(i) -> int:
    if i.opcode in ("fdiv", "frem", "sdiv", "udiv", "srem", "urem"):
        return DIV_OPS
    if i.opcode != "call":
        return 1
    name = i.callee_name or ""
    if name.startswith("llvm."):
        if "dbg" in name or "lifetime" in name:
            return 0
        return DIV_OPS if "sqrt" in name else MATH_OPS if any(m in name for m in MATH) else 1
    return MATH_OPS


def recompute_model(intensity: float, bandwidth: int) -> tuple[int, int]:
    """(recomputation, traffic saved): picoseconds per tape byte (module docstring)."""
    if intensity == float("inf"):
        return 1 << 40, 0
    work = intensity * T_OP_PS
    traffic = 2e12 / bandwidth - 2 * work
    return int(round(work)), int(round(max(0.0, traffic)))


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
    full tape fits tl.budget and either half the cache or tl.costly (module docstring), else
    `call_block`. `values`: the step's parameters as values of the kernel (its parameters, the
    live-ins, the carry)."""
    blk = Block("ckpt.choose." + tl.name.rsplit(".", 1)[-1], fn)
    b = MathBuilder(module, blk)
    zero = ConstInt(T.i64, 0)
    steps = bound_steps(b, bound)
    size = snapshot_bytes(b, values, tl)
    room = b.binop("udiv", ConstInt(T.i64, tl.budget), size)
    in_budget = b.icmp("ule", steps, room, "tape.in.budget")
    in_cache = b.icmp("ule", steps, b.binop("udiv", ConstInt(T.i64, tl.cache // 2), size),
                      "tape.in.cache")
    modelled = bool(tl.cache and tl.bandwidth)
    costly = not modelled or tl.recompute_ps >= tl.traffic_ps
    fits = b.binop("and", in_budget, b.binop("or", in_cache, ConstInt(T.i1, int(costly))),
                   "tape.fits")
    if tl.stats:
        g = Global(T.ptr, tl.stats)
        flag = b.cast("zext", fits, T.i64)
        b.store(flag, b.gep(T.i64, g, [ConstInt(T.i64, STAT_FIELDS.index("tape"))]))
        b.store(b.select(fits, steps, zero), g)
        b.store(size, b.gep(T.i64, g, [ConstInt(T.i64, STAT_FIELDS.index("S"))]))
        kept = WHY.index("recomputation costs more") if modelled else WHY.index("fits the budget")
        why = b.select(in_cache, ConstInt(T.i64, WHY.index("fits the cache")), ConstInt(T.i64, kept))
        why = b.select(fits, why, ConstInt(T.i64, WHY.index("recomputation is cheaper")))
        why = b.select(in_budget, why, ConstInt(T.i64, WHY.index("over the budget")))
        for name, v in (("why", why), ("recompute_ps", ConstInt(T.i64, tl.recompute_ps)),
                        ("traffic_ps", ConstInt(T.i64, tl.traffic_ps)),
                        ("cache", ConstInt(T.i64, tl.cache))):
            b.store(v, b.gep(T.i64, g, [ConstInt(T.i64, STAT_FIELDS.index(name))]))
    b.cbr(fits, lp.header, call_block)
    pre.terminator.replace_successor(lp.header, blk)
    for phi in lp.header.phis():
        phi.blocks = [blk if x is pre else x for x in phi.blocks]
    fn.blocks.insert(fn.blocks.index(lp.header), blk)
