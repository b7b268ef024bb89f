"""Which returns of the primal are successes (rules/convention.py: the host's status codes), and
the blocks from which one can be reached: only they get adjoint code."""
from __future__ import annotations

from ....ir import types as T
from ....ir.builder import Builder
from ....ir.module import Block
from ....ir.values import ConstInt


def success_test(b, status, codes):
    """True / False when known, else an i1 value: is this return a success? `codes`: the success
    codes of an integer status, or None when every return succeeds."""
    if codes is None or status is None or not isinstance(status.type, T.IntType):
        return True
    if isinstance(status, ConstInt):
        return status.value in codes
    test = None
    for c in codes:
        eq = b.icmp("eq", status, ConstInt(status.type, c))
        test = eq if test is None else b.binop("or", test, eq)
    return test


def always_succeeds(module, inst, codes) -> bool:
    """Is `ret` instruction inst known to return a success?"""
    status = inst.ops[0] if inst.ops else None
    return success_test(Builder(module, Block("probe")), status, codes) is True


def blocks_reaching_success(module, dom, preds, codes) -> set:
    """Blocks from which a successful return may be reached (`preds`: reachable predecessors)."""
    probe = Builder(module, Block("probe"))
    work = []
    for blk in dom.order:
        t = blk.terminator
        if t is not None and t.opcode == "ret":
            status = t.ops[0] if t.ops else None
            if success_test(probe, status, codes) is not False:
                work.append(blk)
    seen = set(work)
    while work:
        blk = work.pop()
        for p in preds[blk]:
            if p not in seen:
                seen.add(p)
                work.append(p)
    return seen
