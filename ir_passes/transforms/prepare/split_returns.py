"""Give each path its own return again, before AD (the pass split-returns).

LLVM's simplifycfg merges a function's returns into one block, `common.ret: %s = phi i32 [0, %ok],
[1, %err], ...; ret i32 %s`. A host whose raises return a status code then has a single return
whose status is not a constant, and no block is known to lead only to a raise: reverse mode gives
every block adjoint code (reverse/calls/success.py), the message building and checks of raise paths
included, which in code that raises with formatted messages (a LAPACK call's argument checks) is
most of the function.

This pass undoes the merge: a predecessor that branches unconditionally to a block holding only
phis and a `ret` of one of them (or of a value defined outside the block) returns its own incoming
value instead. Conditional edges keep the shared block. The primal computes the same values and
returns the same status on every path; only where the return instruction sits changes.
"""
from __future__ import annotations


def split_returns(fn) -> int:
    """Replace `br` to a phi-and-ret block by a `ret` of the incoming value; return how many."""
    count = 0
    for blk in list(fn.blocks):
        ret = blk.terminator
        if ret is None or ret.opcode != "ret" or len(blk.instructions) != len(blk.phis()) + 1:
            continue
        phis = blk.phis()
        preds = [b for b in fn.blocks if _branches_only_to(b, blk)]
        for pred in preds:
            ops = [_incoming(o, phis, pred) for o in ret.ops]
            new = ret.copy()
            new.ops, new.dbg = ops, pred.terminator.dbg or ret.dbg     # the path's own line
            pred.instructions[-1] = new
            new.block = pred
            for p in phis:
                k = p.blocks.index(pred)
                del p.blocks[k]
                del p.ops[k]
            count += 1
        if preds and not any(blk in b.successors() for b in fn.blocks if b is not blk):
            fn.blocks.remove(blk)
    return count


def _branches_only_to(pred, blk) -> bool:
    t = pred.terminator
    return t is not None and t.opcode == "br" and len(t.targets) == 1 and t.targets[0] is blk


def _incoming(value, phis, pred):
    for p in phis:
        if value is p:
            return p.ops[p.blocks.index(pred)]
    return value
