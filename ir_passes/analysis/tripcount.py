"""Trip-count bounds: an upper bound on a loop's iterations, computable when the loop is entered.

An exit qualifies when its block runs on every iteration (it dominates every latch) and leaves
on `icmp pred a, b` where one side is an induction variable (phi [init, outside], [phi + step,
latch], or that increment) with constant step and the other side is defined outside the loop.
With K = |b - init| // |step|, such an exit leaves within K + 2 iterations when its test holds
for the value the induction variable has on iteration 0, or for init + step * K or init +
step * (K + 1) (values it has by iteration K + 1 at the latest, if ever): the test is checked on
every iteration, so the loop leaves at the first one where it holds. Whether it
holds depends on the predicate and the values: `i == stop` with stop below the start never
holds, and neither does `i < lo` past lo. So the bound of an entry is the least K + 2 over the
exits whose test holds there (`ExitBound.fires`, decided on entry, or here for constants), and
a loop entered with none, or that can also leave elsewhere (`TripBound.others`: a data test, a
raise) while its bound is not tight, has its tape grown on the way. Over-estimating is safe: the
bound only reserves tape space; loops with no such exit grow their tape.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import types as T
from ..ir.instructions import Instruction
from ..ir.values import Argument, Constant, ConstInt
from .dominators import dominators
from .loops import loop_info


@dataclass
class ExitBound:
    """An exit `br (icmp leave iv, bound)` that leaves the loop when `leave` holds, the induction
    variable on the left: iv = init + step * (j + offset) on iteration j (offset 1 when the test
    reads the increment). It leaves within K + 2 iterations, K = |bound - init| // |step|, when
    `leave` holds for iv = init + step * offset, init + step * K or init + step * (K + 1)."""
    init: object
    bound: object
    step: int
    leave: str
    offset: int

    def steps(self) -> int | None:
        """K + 2 when init and bound are constants and the test holds for one of the three
        values, else None."""
        if not (isinstance(self.init, ConstInt) and isinstance(self.bound, ConstInt)):
            return None
        init, end, bits = self.init.value, self.bound.value, self.init.type.bits
        k = abs(end - init) // abs(self.step)
        for j in (self.offset, k, k + 1):
            if holds(self.leave, wrap(init + self.step * j, bits), end, bits):
                return k + 2
        return None


@dataclass
class TripBound:
    """The qualifying exits of a loop; `others`: it has exits besides them."""
    exits: list = field(default_factory=list)
    others: bool = False


def wrap(v: int, bits: int) -> int:
    """v as a signed integer of `bits` bits."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def holds(pred: str, a: int, b: int, bits: int) -> bool:
    """icmp pred a, b on signed values of `bits` bits."""
    if pred[0] == "u":
        a, b = a % (1 << bits), b % (1 << bits)
        pred = "s" + pred[1:]
    return {"eq": a == b, "ne": a != b, "slt": a < b, "sle": a <= b, "sgt": a > b,
            "sge": a >= b}[pred]


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
    """The loop's qualifying exits (module docstring), or None when it has none."""
    tb = TripBound()
    for blk in [b for b in dom.order if b in loop.blocks]:     # a fixed order: the printer's
        term = blk.terminator
        if term is None or not any(t not in loop.blocks for t in blk.successors()):
            continue
        exit_bound = _exit_bound(blk, loop, dom)
        if exit_bound is None:
            tb.others = True
        else:
            tb.exits.append(exit_bound)
    return tb if tb.exits else None


def _exit_bound(blk, loop, dom) -> ExitBound | None:
    term = blk.terminator
    if term.opcode != "br" or not term.ops or len(term.targets) != 2:
        return None
    if not all(dom.dominates(blk, latch) for latch in loop.latches):
        return None
    cond = term.ops[0]
    if not (isinstance(cond, Instruction) and cond.opcode == "icmp" and cond.pred in SWAPPED_ALL):
        return None
    inside = term.targets[0] in loop.blocks
    leave = INVERSE_ALL[cond.pred] if inside else cond.pred
    for a, b, pred in ((cond.ops[0], cond.ops[1], leave), (cond.ops[1], cond.ops[0], SWAPPED_ALL[leave])):
        iv = induction(a, loop)
        if iv is None or not invariant(b, loop) or iv[1] == 0:
            continue
        phi, step = iv
        init = [x for x, blk2 in zip(phi.ops, phi.blocks) if blk2 not in loop.blocks][0]
        if isinstance(b.type, type(init.type)) and b.type == init.type:
            return ExitBound(init, b, step, pred, 0 if a is phi else 1)
    return None


SWAPPED_ALL = {"eq": "eq", "ne": "ne", "slt": "sgt", "sgt": "slt", "sle": "sge", "sge": "sle",
               "ult": "ugt", "ugt": "ult", "ule": "uge", "uge": "ule"}
INVERSE_ALL = {"eq": "ne", "ne": "eq", "slt": "sge", "sge": "slt", "sgt": "sle", "sle": "sgt",
               "ult": "uge", "uge": "ult", "ugt": "ule", "ule": "ugt"}


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
        bound = "unknown" if tb is None else " or ".join(
            f"|{e.bound.ref()} - {e.init.ref()}| / {abs(e.step)} + 2 if {e.leave}"
            f"{'' if e.offset == 0 else ' (increment)'} fires" for e in tb.exits) + \
            (", or leaves elsewhere" if tb.others else "")
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
    fired = [k for k in (e.steps() for e in tb.exits) if k is not None] if tb is not None else []
    if fired:
        return min(fired)
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
