"""Which integers are never negative (fold-sign-tests uses it: transforms/prepare/)."""
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
        if op in ("select", "phi"):
            return all(self.holds(x) for x in (ops[1:] if op == "select" else ops))
        name = v.callee_name if op == "call" else None
        if name and name.startswith(("llvm.smax.", "llvm.umin.")):
            return self.holds(ops[0]) or self.holds(ops[1])
        if name and name.startswith("llvm.smin."):
            return self.holds(ops[0]) and self.holds(ops[1])
        return False


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
