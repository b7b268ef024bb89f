"""Reverse mode: add the gradient of a function to its module.

The gradient runs the augmented forward sweep (forward_sweep.py), then, if the primal succeeded,
the reverse sweep (reverse_sweep.py). Values cross from one to the other through the tape (tape.py)
or are recomputed (availability.py). Instruction adjoints come from the rule table (rules/).
"""
from __future__ import annotations

from ..ir.builder import MathBuilder
from .forward_sweep import ForwardSweep, success_test
from .gradient import Gradient
from .reverse_sweep import ReverseSweep

NUMBA_SUCCESS = (0, -2)


def reverse_mode(module, fn_name, activity, out_name, *, cache="minimal", noalias=False,
                 success_codes=NUMBA_SUCCESS):
    """Add `out_name`, the reverse-mode gradient of `fn_name` (see docs/internals.md).

    activity: one of "const", "dup", "active" per parameter of the primal.
    cache: "minimal" recomputes what analysis proves safe; "always" caches every needed value.
    noalias: the caller guarantees that distinct pointer parameters do not overlap.
    Returns the Gradient, whose `tape` lists what was cached.
    """
    if cache not in ("minimal", "always"):
        raise ValueError(f"cache must be 'minimal' or 'always', not {cache!r}")
    primal = module.functions[fn_name]
    g = Gradient(module, primal, activity, out_name, cache, noalias)
    g.success_codes = success_codes
    reachable = set(g.dom.order)
    all_preds = primal.predecessors()
    g.preds = {blk: [p for p in all_preds[blk] if p in reachable] for blk in g.dom.order}

    fwd = ForwardSweep(g)
    fwd.clone_blocks()
    rev = ReverseSweep(g, fwd)
    rev.build(blocks_reaching_success(g))
    fwd.finish(rev)
    b = MathBuilder(module, g.alloca_block)
    b.br(fwd.fb[primal.entry])
    return g


def blocks_reaching_success(g) -> set:
    """Blocks from which a successful return may be reached: only they get adjoint code."""
    from ..ir.builder import Builder
    from ..ir.module import Block
    probe = Builder(g.module, Block("probe"))
    work = []
    for blk in g.dom.order:
        t = blk.terminator
        if t is not None and t.opcode == "ret":
            status = t.ops[0] if t.ops else None
            if success_test(probe, status, g.success_codes) is not False:
                work.append(blk)
    seen = set(work)
    while work:
        blk = work.pop()
        for p in g.preds[blk]:
            if p not in seen:
                seen.add(p)
                work.append(p)
    return seen
