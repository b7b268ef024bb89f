"""Fold sign tests of integers that are never negative, before AD (the pass fold-sign-tests).

A host that wraps negative indices as Python does turns `a[i]` into `a + (i < 0 ? n : 0) + i`.
When i is a loop counter that starts at 0 the test is always false, but LLVM often cannot prove
it (a counter that stops at an array's length, an index carried across an outer loop). The select that remains makes the
index non-affine, and the loops that use it, forward and reverse, stay scalar.

An integer is non-negative here (analysis/nonnegative.py) when it is
- a constant >= 0, or a parameter the caller says is (an array's length);
- `zext`, `lshr` by a non-zero amount, `and` / `urem` with a non-negative operand;
- `add nsw`, `mul nsw`, `select`, `smax`/`smin` of non-negative values;
- a phi whose incoming values are all non-negative, assuming it is (an induction: true at entry,
  and each step keeps it);
- the counter of a loop that counts up by one without unsigned wrap (`add nuw`) until it equals
  a non-negative bound: it stays below the bound.
- an i64 that counts: a constant in [0, 2^61), `add x, 1` of one that counts, a phi or select
  of such (no wrap flags needed: it stays below 2^63 while the program runs fewer than 2^62
  increments); GMM's packed triangular index, the exit counter of its inner loop, is one.
A phi's incoming value on an edge taken only when `icmp eq a, v` holds may use a's fact.
Then `icmp slt x, 0` is false, `icmp sge x, 0` and `icmp sgt x, -1` are true, and their uses
get the constant. The primal computes the same values; only the tests go.
"""
from __future__ import annotations

from ...analysis.nonnegative import NonNegative
from ...ir.values import ConstInt

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
