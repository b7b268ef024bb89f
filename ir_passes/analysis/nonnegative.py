"""Which integers are never negative (fold-sign-tests uses it: transforms/prepare/).

Besides the rules of NonNegative, an i64 is non-negative when it counts (`_counting`): it is a
constant in [0, 2^61), `add x, 1` of a counting x, or a phi or select of counting values. Each
such value is a start constant plus one for each execution of a counting `add` on the chain
that made it, so it is below 2^61 + (the `add`s executed so far): non-negative as long as the
program runs fewer than 2^62 increments (146 years at one a nanosecond). That is the one
assumption here; it covers counters without wrap flags, whose loops exit on another variable
(a packed triangular index, carried across an outer loop, that steps with the inner counter).

A phi's incoming value v on an edge taken only when `icmp eq a, v` holds (or `icmp ne a, v`
fails) equals a there, so either one's fact serves (`_edge_equal`): a loop that exits when its
counter reaches `start + len` leaves with the counter, whatever `start + len` is known to be.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.instructions import Instruction
from ..ir.values import Argument, ConstInt
from .loops import IrreducibleError, loop_info
from .tripcount import exact_trip


class NonNegative:
    """The greatest set of integer instructions that the rules above keep non-negative, found by
    striking out, until nothing changes, every member whose rule fails on the current set. By
    induction over the execution (a phi's loop-carried operand comes from an earlier
    iteration), every value a member takes is non-negative."""

    def __init__(self, fn, params):
        self.params = params
        self.counters = _bounded_counters(fn)
        self.counting = _counting(fn)
        insts = [i for i in fn.instructions() if isinstance(i.type, T.IntType)]
        self.member = {id(i): True for i in insts}
        changed = True
        while changed:
            changed = False
            for i in insts:
                if self.member[id(i)] and not self._rule(i):
                    self.member[id(i)] = False
                    changed = True

    def holds(self, v) -> bool:
        if isinstance(v, ConstInt):
            return v.value >= 0
        if isinstance(v, Argument):
            return v.index in self.params
        return self.member.get(id(v), False)

    def _rule(self, v) -> bool:
        op, ops = v.opcode, v.ops
        if id(v) in self.counting:
            return True
        bound = self.counters.get(id(v))
        if bound is not None and all(self.holds(x) for x in bound):
            return True
        if op == "zext":
            return True
        if op == "lshr":
            return isinstance(ops[1], ConstInt) and ops[1].value > 0 or self.holds(ops[0])
        if op in ("and", "urem"):
            return self.holds(ops[0]) or self.holds(ops[1])
        if op in ("add", "mul"):
            return "nsw" in v.flags and self.holds(ops[0]) and self.holds(ops[1])
        if op == "select":
            return self.holds(ops[1]) and self.holds(ops[2])
        if op == "phi":
            return all(self.holds(x) or self.holds(_edge_equal(v, k)) for k, x in enumerate(ops))
        name = v.callee_name if op == "call" else None
        if name and name.startswith(("llvm.smax.", "llvm.umin.")):
            return self.holds(ops[0]) or self.holds(ops[1])
        if name and name.startswith("llvm.smin."):
            return self.holds(ops[0]) and self.holds(ops[1])
        return False


COUNT_START_LIMIT = 1 << 61


def _counting(fn) -> set:
    """ids of the i64 values that count (module docstring): the greatest set closed under the
    rules, found by striking out members whose rule fails, as NonNegative does."""
    cands = [i for i in fn.instructions() if i.type == T.i64 and _count_rule(i, None) is not None]
    member = {id(i) for i in cands}

    def counts(x) -> bool:
        if isinstance(x, ConstInt):
            return 0 <= x.value < COUNT_START_LIMIT
        return id(x) in member

    changed = True
    while changed:
        changed = False
        for i in cands:
            if id(i) in member and not _count_rule(i, counts):
                member.discard(id(i))
                changed = True
    return member


def _count_rule(v, counts):
    """Whether v counts given `counts` for its operands; None when no rule applies to v (with
    counts None: just whether one could)."""
    op, ops = v.opcode, v.ops
    if op == "add":
        steps = [k for k, x in enumerate(ops) if isinstance(x, ConstInt) and x.value == 1]
        if not steps:
            return None
        return counts is None or counts(ops[1 - steps[0]])
    if op == "select":
        return counts is None or counts(ops[1]) and counts(ops[2])
    if op == "phi":
        return counts is None or all(counts(x) or counts(_edge_equal(v, k))
                                     for k, x in enumerate(ops))
    return None


def _edge_equal(phi, k):
    """A value equal to the phi's k-th incoming value on its edge, or None: the edge is taken
    only when its branch's `icmp eq a, v` holds or `icmp ne a, v` fails, so v equals a there."""
    v, term = phi.ops[k], phi.blocks[k].terminator
    if term is None or term.opcode != "br" or len(term.ops) != 1:
        return None
    cond, (yes, no) = term.ops[0], term.targets
    if not (isinstance(cond, Instruction) and cond.opcode == "icmp") or yes is no:
        return None
    if (cond.pred, phi.block) not in (("eq", yes), ("ne", no)):
        return None
    a, b = cond.ops
    return b if a is v else a if b is v else None


def _bounded_counters(fn) -> dict:
    """{id(value): (init, bound)} for the counters of loops that step by +1 without unsigned
    wrap (`add nuw`) until they equal `bound` (tripcount.exact_trip, `ne` form): the counter
    runs from init up to bound unsigned, so both non-negative makes it non-negative. When the
    exit tests the increment, the counter stays below bound and the increment reaches it."""
    out = {}
    try:
        loops = loop_info(fn).loops
    except IrreducibleError:     # no natural loops to read counters from: none known
        return out
    for lp in loops:
        et = exact_trip(lp, set())     # other exits only stop the counter earlier
        if et is None or et.strict or et.step != 1:
            continue
        inc = [x for x, b in zip(et.phi.ops, et.phi.blocks) if b in lp.blocks]
        if inc and all(isinstance(x, Instruction) and x.opcode == "add" and "nuw" in x.flags for x in inc):
            out[id(et.phi)] = (et.init, et.bound)
            if not et.on_phi:
                for x in inc:
                    out[id(x)] = (et.init, et.bound)
    return out


def print_nonnegative(fn, nonnegative_params=()) -> str:
    """Each named integer of fn: `nonnegative` or `maybe negative`."""
    facts = NonNegative(fn, set(nonnegative_params))
    return "\n".join(f"%{i.name}: {'nonnegative' if facts.holds(i) else 'maybe negative'}"
                     for i in fn.instructions() if i.name and isinstance(i.type, T.IntType))
