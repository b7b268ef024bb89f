"""Where the two arms of a conditional branch join: which way control came into a block is then
the branch condition's most recent value (the reverse sweep asks it again instead of taping which
predecessor ran)."""
from __future__ import annotations

from .dominators import dominators


def branch_join(dom, preds, blk):
    """When `blk` joins the two arms of one conditional branch `br c, T, F` in its immediate
    dominator D (each predecessor is D itself on the arm that jumps straight to `blk`, or lies in
    an arm whose entry only D reaches), return (c, pred on the true arm, pred on the false arm);
    else None. `preds`: each reachable block's reachable predecessors."""
    ps = preds[blk]
    if len(ps) != 2:
        return None
    d = dom.idom.get(blk)
    t = d.terminator if d is not None else None
    if t is None or t.opcode != "br" or not t.ops or t.targets[0] is t.targets[1]:
        return None
    side = {}
    for p in ps:
        arms = [k for k, s in enumerate(t.targets)
                if (p is d and s is blk) or
                (s is not blk and preds.get(s) == [d] and dom.dominates(s, p))]
        if len(arms) != 1 or arms[0] in side:
            return None
        side[arms[0]] = p
    return t.ops[0], side[0], side[1]


def print_branches(fn) -> str:
    """Each block where a branch joins: `%join: %cond ? %true_pred : %false_pred`."""
    dom = dominators(fn)
    reachable = set(dom.order)
    preds = {b: [p for p in ps if p in reachable] for b, ps in fn.predecessors().items()
             if b in reachable}
    out = []
    for blk in dom.order:
        joined = branch_join(dom, preds, blk)
        if joined is not None:
            c, t, f = joined
            out.append(f"%{blk.name}: {c.ref()} ? %{t.name} : %{f.name}")
    return "\n".join(out)
