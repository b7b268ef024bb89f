"""The run-time trip bound of one entry of a loop (analysis/tripcount.py's TripBound).

With K = |bound - init| // |step| per qualifying exit, an entry runs at most K + 2 iterations
when that exit's test holds for the induction variable's value on iteration 0 (init + step *
offset) or for init + step * K or init + step * (K + 1) (reached on iteration K - offset or
K + 1 - offset, if ever); the bound is the least such K + 2, or
NONE when no exit's test is sure to hold (the loop leaves elsewhere, or never). A K of 2**62 or
more counts as no bound (K + 2 must not wrap).
"""
from __future__ import annotations

from ....ir import types as T
from ....ir.values import ConstInt

NONE = (1 << 63) - 1
LARGEST = 1 << 62


def bound_steps(b, tb, value=lambda v: v):
    """The least K + 2 over the exits of `tb` whose test holds (module docstring), or NONE; an
    i64 built with b. `value` maps the exits' values to those at b (a clone's)."""
    best = ConstInt(T.i64, NONE)
    for e in tb.exits:
        init, end = value(e.init), value(e.bound)
        init64 = b.cast("sext", init, T.i64) if init.type != T.i64 else init
        end64 = b.cast("sext", end, T.i64) if end.type != T.i64 else end
        zero = ConstInt(T.i64, 0)
        diff = b.sub(end64, init64)
        dist = b.select(b.icmp("slt", diff, zero), b.sub(zero, diff), diff)
        k = b.binop("udiv", dist, ConstInt(T.i64, abs(e.step)))
        fires = b.icmp("ult", k, ConstInt(T.i64, LARGEST))
        seen = None
        for j in (ConstInt(T.i64, e.offset), k, b.add(k, ConstInt(T.i64, 1))):
            iv = b.add(init64, b.mul(j, ConstInt(T.i64, e.step)))
            iv = b.cast("trunc", iv, init.type) if init.type != T.i64 else iv
            test = b.icmp(e.leave, iv, end)
            seen = test if seen is None else b.binop("or", seen, test)
        steps = b.select(b.binop("and", fires, seen), b.add(k, ConstInt(T.i64, 2)), ConstInt(T.i64, NONE))
        best = b.select(b.icmp("ult", steps, best), steps, best)
    return best


ROOM = 1 << 20      # iterations a growing loop reserves on entry at most


def grows(tb) -> bool:
    """Whether a loop's tape is grown on every iteration: it has no qualifying exit, or it may
    leave elsewhere, so that no exit may fire and its bound is only a hint."""
    return tb is None or tb.others
