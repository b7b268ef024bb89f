"""Trip-count bounds: an upper bound on a loop's iterations, computable when the loop is entered.

A loop qualifies when one of its exiting blocks runs on every iteration (it dominates every latch)
and leaves on `icmp pred a, b` where one side is an induction variable (phi [init, outside],
[phi + step, latch], or that increment) with constant step and the other side is defined outside
the loop. Then iterations <= |bound - init| / |step| + 2 whatever the predicate. The bound is only
used to reserve tape space, so over-estimating is safe; loops with no such exit grow their tape.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ir.instructions import Instruction
from ..ir.values import Argument, Constant, ConstInt
from .dominators import dominators
from .loops import loop_info


@dataclass
class TripBound:
    """iterations <= |bound - init| // |step| + 2."""
    init: object
    bound: object
    step: int


def induction(v, loop):
    """(phi, step) when v is an induction phi of `loop` or its increment."""
    if isinstance(v, Instruction) and v.opcode == "add" and v.block in loop.blocks:
        for a, s in ((v.ops[0], v.ops[1]), (v.ops[1], v.ops[0])):
            if isinstance(s, ConstInt) and _is_iv(a, v, loop):
                return a, s.value
    if isinstance(v, Instruction) and v.opcode == "phi" and v.block is loop.header:
        for x in v.ops:
            if isinstance(x, Instruction) and x.opcode == "add" and v in x.ops:
                s = x.ops[1] if x.ops[0] is v else x.ops[0]
                if isinstance(s, ConstInt) and _is_iv(v, x, loop):
                    return v, s.value
    return None


def _is_iv(phi, inc, loop) -> bool:
    if not (isinstance(phi, Instruction) and phi.opcode == "phi" and phi.block is loop.header):
        return False
    inside = [x for x, b in zip(phi.ops, phi.blocks) if b in loop.blocks]
    outside = [x for x, b in zip(phi.ops, phi.blocks) if b not in loop.blocks]
    return bool(inside) and all(x is inc for x in inside) and len(outside) >= 1 and \
        all(x is outside[0] for x in outside)


def invariant(v, loop) -> bool:
    return isinstance(v, (Constant, Argument)) or (isinstance(v, Instruction) and v.block not in loop.blocks)


def trip_bound(loop, dom) -> TripBound | None:
    for blk in loop.blocks:
        term = blk.terminator
        if term is None or term.opcode != "br" or not term.ops:
            continue
        if all(t in loop.blocks for t in term.targets):
            continue
        if not all(dom.dominates(blk, latch) for latch in loop.latches):
            continue
        cond = term.ops[0]
        if not (isinstance(cond, Instruction) and cond.opcode == "icmp"):
            continue
        for a, b in ((cond.ops[0], cond.ops[1]), (cond.ops[1], cond.ops[0])):
            iv = induction(a, loop)
            if iv is None or not invariant(b, loop) or iv[1] == 0:
                continue
            phi, step = iv
            init = [x for x, blk2 in zip(phi.ops, phi.blocks) if blk2 not in loop.blocks][0]
            if isinstance(b.type, type(init.type)) and b.type == init.type:
                return TripBound(init, b, step)
    return None


@dataclass
class ExactTrip:
    """Every entry of the loop that ends well runs exactly N iterations. With the distance
    D = (bound - init) * step: for an `ne` test N = D (D + 1 when the test reads the phi rather
    than its increment); for a strict `slt`/`sgt` test in the direction of the step
    N = max(D, 1) (max(D, 0) + 1 on the phi)."""
    init: object
    bound: object
    step: int
    on_phi: bool
    strict: bool          # slt/sgt rather than ne
    phi: object = None    # the induction variable


SWAPPED = {"eq": "eq", "ne": "ne", "slt": "sgt", "sgt": "slt", "sle": "sge", "sge": "sle"}
INVERSE = {"eq": "ne", "ne": "eq", "slt": "sge", "sge": "slt", "sgt": "sle", "sle": "sgt"}


def exact_trip(loop, reaching) -> ExactTrip | None:
    """The exact iteration count of each entry of `loop`, when its only exit toward a successful
    return is the latch's signed or equality test of an i64 induction variable (step +-1)
    against a value defined outside the loop. Exits into failure paths do not count: the
    reverse sweep of a failed call never runs. None when the count is not known this way."""
    if len(loop.latches) != 1:
        return None
    latch = loop.latches[0]
    for blk in loop.blocks:
        if blk is not latch and any(s not in loop.blocks and s in reaching for s in blk.successors()):
            return None
    term = latch.terminator
    if term is None or term.opcode != "br" or not term.ops or len(term.targets) != 2:
        return None
    inside = [t in loop.blocks for t in term.targets]
    if inside.count(True) != 1 or term.targets[inside.index(True)] is not loop.header:
        return None
    cond = term.ops[0]
    if not (isinstance(cond, Instruction) and cond.opcode == "icmp"):
        return None
    pred = cond.pred
    if "samesign" in cond.flags and pred[0] == "u":    # same signs: unsigned order is signed
        pred = "s" + pred[1:]
    if pred not in SWAPPED:
        return None
    for a, b, pred in ((cond.ops[0], cond.ops[1], pred), (cond.ops[1], cond.ops[0], SWAPPED[pred])):
        iv = induction(a, loop)
        if iv is None or abs(iv[1]) != 1 or not invariant(b, loop):
            continue
        phi, step = iv
        if phi.type != b.type or getattr(phi.type, "bits", None) != 64:
            continue
        stay = pred if inside[0] else INVERSE[pred]       # the test that continues the loop
        strict = stay == ("slt" if step == 1 else "sgt")
        if stay != "ne" and not strict:
            continue
        init = [x for x, blk in zip(phi.ops, phi.blocks) if blk not in loop.blocks][0]
        return ExactTrip(init, b, step, a is phi, strict, phi)
    return None


def print_tripcounts(fn) -> str:
    """Per loop: its trip bound (`iterations <= |bound - init| / |step| + 2`) and its exact trip
    count (the reverse sweep then needs no start on the tape), or `unknown`."""
    info = loop_info(fn)
    dom = dominators(fn)
    out = []
    for lp in info.loops:
        tb = trip_bound(lp, dom)
        bound = (f"|{tb.bound.ref()} - {tb.init.ref()}| / {abs(tb.step)} + 2" if tb is not None
                 else "unknown")
        et = exact_trip(lp, set(dom.order))
        if et is None:
            exact = "unknown"
        else:
            test = "slt/sgt" if et.strict else "ne"
            exact = (f"from {et.init.ref()} to {et.bound.ref()} step {et.step} ({test} on the "
                     f"{'phi' if et.on_phi else 'increment'} {et.phi.ref()})")
        out.append(f"loop {lp.index} header {lp.header.name}: bound {bound}; exact {exact}")
    return "\n".join(out)


def constant_trip_bound(loop, dom) -> int | None:
    """A constant bound on the iterations of one entry of `loop`, or None: an induction variable
    between constants (`range(3)`), or a value halved every iteration until it is zero
    (`while s > 0: s //= 2`: at most its bit width + 2)."""
    tb = trip_bound(loop, dom)
    if tb is not None and isinstance(tb.init, ConstInt) and isinstance(tb.bound, ConstInt):
        return abs(tb.bound.value - tb.init.value) // abs(tb.step) + 2
    for blk in loop.blocks:
        term = blk.terminator
        if term is None or term.opcode != "br" or not term.ops or \
                all(t in loop.blocks for t in term.targets) or \
                not all(dom.dominates(blk, latch) for latch in loop.latches):
            continue
        cond = term.ops[0]
        if not (isinstance(cond, Instruction) and cond.opcode == "icmp" and
                isinstance(cond.ops[1], ConstInt) and cond.ops[1].value == 0):
            continue
        leaves_on_zero = {"eq": 0, "ne": 1, "sgt": 1, "ugt": 1}.get(cond.pred)
        if leaves_on_zero is None or term.targets[leaves_on_zero] in loop.blocks:
            continue
        bits = _halving(cond.ops[0], loop)
        if bits is not None:
            return bits + 2
    return None


def _halving(v, loop) -> int | None:
    """The bit width of a header phi whose only in-loop value is itself shifted right by a
    positive constant, when v is that phi or that shift; else None."""
    shift = v if getattr(v, "opcode", "") == "lshr" else None
    phi = shift.ops[0] if shift is not None else v
    if not (isinstance(phi, Instruction) and phi.opcode == "phi" and phi.block is loop.header):
        return None
    inside = [x for x, b in zip(phi.ops, phi.blocks) if b in loop.blocks]
    for x in inside:
        if not (isinstance(x, Instruction) and x.opcode == "lshr" and x.ops[0] is phi and
                isinstance(x.ops[1], ConstInt) and x.ops[1].value > 0):
            return None
        if shift is not None and x is not shift:
            return None
    return phi.type.bits if inside and isinstance(phi.type, T.IntType) else None
