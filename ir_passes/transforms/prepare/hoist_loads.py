"""Hoist loop-invariant loads out of loops, with our own alias facts.

LLVM's LICM keeps a load of `a[i]` inside a `j` loop that stores to `b[j]` when it cannot tell
`a` from `b`: two `np.empty` temporaries reach LLVM as pointers loaded from meminfos. Our alias
analysis knows distinct allocations are disjoint. A load left in the inner loop would be taped
once per inner iteration when later code overwrites `a`; hoisted, it is taped once per outer
iteration.

A load moves to its loop's preheader when
- its pointer is defined outside the loop,
- no write in the loop may alias it (analysis/alias.py), and
- its block dominates every exiting block, so it runs whenever the loop is entered, and
- the loop has no lifetime markers.
Innermost loops go first, so a load can climb several levels.
"""
from __future__ import annotations

from ...analysis.alias import alias_analysis
from ...analysis.dominators import dominators
from ...analysis.loops import loop_info


def hoist_invariant_loads(fn, noalias_params: bool = False) -> int:
    """Move invariant loads of `fn` to loop preheaders; return how many moved."""
    info = loop_info(fn)
    if not info.loops:
        return 0
    dom = dominators(fn)
    alias = alias_analysis(fn, noalias_params)
    preds = fn.predecessors()
    moved = 0
    for lp in sorted(info.loops, key=lambda lp: -lp.depth):
        pre = preheader(lp, preds)
        if pre is None:
            continue
        writes = [p for w, p in alias.writes if w.block in lp.blocks]
        if None in writes or _has_lifetime_markers(lp):
            continue
        exiting = [b for b in lp.blocks if any(s not in lp.blocks for s in b.successors())]
        for blk in [b for b in dom.order if b in lp.blocks]:
            if not all(dom.dominates(blk, e) for e in exiting):
                continue
            for inst in list(blk.instructions):
                if inst.opcode != "load" or inst.volatile or inst.flags:
                    continue
                ptr = inst.ops[0]
                if getattr(ptr, "block", None) in lp.blocks:
                    continue
                if any(alias.may_alias(ptr, p) for p in writes):
                    continue
                blk.instructions.remove(inst)
                pre.insert(len(pre.instructions) - 1, inst)
                moved += 1
    return moved


def _has_lifetime_markers(lp) -> bool:
    """llvm.lifetime.start/end make memory undefined between them: leave such loops alone."""
    return any(i.opcode == "call" and (i.callee_name or "").startswith("llvm.lifetime")
               for b in lp.blocks for i in b.instructions)


def preheader(lp, preds):
    """The header's one predecessor outside the loop, when it only branches to the header."""
    outside = [p for p in preds.get(lp.header, []) if p not in lp.blocks]
    if len(outside) != 1:
        return None
    p = outside[0]
    t = p.terminator
    if t is None or t.opcode != "br" or len(t.successors()) != 1:
        return None
    return p
