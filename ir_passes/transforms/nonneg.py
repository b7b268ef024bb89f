"""Fold sign tests of integers that are never negative, before AD.

Numba wraps negative indices: `a[i]` becomes `a + (i < 0 ? n : 0) + i`. When i is a loop counter
that starts at 0 the test is always false, but LLVM often cannot prove it (a counter that stops
at an array's length, an index carried across an outer loop). The select that remains makes the
index non-affine, and the loops that use it, forward and reverse, stay scalar.

An integer is non-negative here when it is
- a constant >= 0, or a parameter the caller says is (an array's length);
- `zext`, `lshr` by a non-zero amount, `and` / `urem` with a non-negative operand;
- `add nsw`, `mul nsw`, `select`, `smax`/`smin` of non-negative values;
- a phi whose incoming values are all non-negative, assuming it is (an induction: true at entry,
  and each step keeps it);
- the counter of a loop that counts up by one without unsigned wrap (`add nuw`) until it equals
  a non-negative bound: it stays below the bound.
Then `icmp slt x, 0` is false, `icmp sge x, 0` and `icmp sgt x, -1` are true, and their uses
get the constant. The primal computes the same values; only the tests go.
"""
from __future__ import annotations

from ..analysis.loops import loop_info
from ..analysis.tripcount import exact_trip
from ..ir import types as T
from ..ir.values import Argument, ConstInt

FOLDS = {("slt", 0): 0, ("sge", 0): 1, ("sgt", -1): 1, ("sle", -1): 0}


def fold_sign_tests(fn, nonnegative_params=()) -> int:
    """Replace sign tests of non-negative integers in `fn` by constants; return how many."""
    facts = NonNegative(fn, set(nonnegative_params))
    replaced = {}
    for inst in fn.instructions():
        if inst.opcode != "icmp" or not isinstance(inst.ops[1], ConstInt):
            continue
        result = FOLDS.get((inst.pred, inst.ops[1].value))
        if result is not None and facts.holds(inst.ops[0]):
            replaced[id(inst)] = ConstInt(inst.type, result)
    if not replaced:
        return 0
    for inst in fn.instructions():
        for k, o in enumerate(inst.ops):
            if id(o) in replaced:
                inst.ops[k] = replaced[id(o)]
    return len(replaced)


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
    for lp in loop_info(fn).loops:
        et = exact_trip(lp, set())     # other exits only stop the counter earlier
        if et is None or et.strict or et.step != 1:
            continue
        inc = [x for x, b in zip(et.phi.ops, et.phi.blocks) if b in lp.blocks]
        if inc and all(getattr(x, "opcode", None) == "add" and "nuw" in x.flags for x in inc):
            out[id(et.phi)] = (et.init, et.bound)
            if not et.on_phi:
                for x in inc:
                    out[id(x)] = (et.init, et.bound)
    return out
