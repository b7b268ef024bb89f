"""Stack blocks made before a time loop that serve one step only.

A host makes the blocks a parallel launch reads (its argument block, shape and steps arrays, the
schedule's bounds, the host lock's state, a boxed scalar argument) once, in the function's entry, and
fills them before each launch. For checkpointing they are the step's own, not state: the step
makes its own copies (outline.py clones them into its entry) and a snapshot does not copy them.

An alloca qualifies when
- outside the loop it is only initialised (stores into it in the entry block) and addressed
  (constant geps, cloned with it);
- inside the loop it is written, read (loaded, passed to a call), or its address is stored
  into another such block (an argument block holding a pointer to a boxed scalar);
- every read in the loop comes after a write into it in the same step (a store in a block of
  the loop that dominates the read): what a step reads from it, the step wrote.

`through(roots)` lists the memory reached through such blocks: the roots of the pointers
stored into them in the loop (the arrays a launch's argument block names), which a call given
the block may read and write.
"""
from __future__ import annotations

from .....analysis.dominators import dominators
from .....analysis.types import roots
from .....ir.instructions import Instruction
from .....ir.values import ConstInt
from ....common.markers import is_marker

ADDRESSING = ("getelementptr", "bitcast")
FILLS = ("llvm.memset.",)          # write their first operand


def step_local_blocks(fn, lp) -> set:
    """ids of the allocas of fn (before loop lp) that are lp's step-local blocks."""
    users: dict = {}
    for b in fn.blocks:
        for i in b.instructions:
            for o in i.ops:
                users.setdefault(id(o), []).append(i)
    cands = {}
    for i in fn.entry.instructions:
        if i.opcode == "alloca" and i.block not in lp.blocks:
            uses = _uses(i, users, fn, lp)
            if uses is not None:
                cands[id(i)] = (i, uses)
    dom = dominators(fn)
    while True:
        drop = [k for k, (a, uses) in cands.items() if not _qualifies(a, uses, cands, dom)]
        if not drop:
            return set(cands)
        for k in drop:
            del cands[k]


def _uses(a, users, fn, lp):
    """(writes, reads, escapes) in the loop of alloca a and its addresses, or None when a use
    rules it out."""
    writes, reads, escapes = [], [], []
    work, seen = [a], set()
    while work:
        p = work.pop()
        if id(p) in seen:
            continue
        seen.add(id(p))
        for u in users.get(id(p), []):
            inside = u.block in lp.blocks
            if u.opcode in ADDRESSING and u.ops[0] is p and \
                    all(isinstance(x, ConstInt) for x in u.ops[1:]):
                work.append(u)
            elif u.opcode == "store" and u.ops[1] is p and u.ops[0] is not p:
                if inside:
                    writes.append(u)
                elif u.block is not fn.entry:
                    return None
            elif not inside:
                return None
            elif u.opcode == "store" and u.ops[0] is p:
                escapes.append(u)
            elif is_marker(u):            # neither read nor write
                continue
            elif u.opcode == "call" and (u.callee_name or "").startswith(FILLS) and u.ops[0] is p:
                writes.append(u)
            elif u.opcode == "load" or u.opcode == "call" and u.callee_name:
                reads.append(u)
            else:
                return None
    return writes, reads, escapes


def _qualifies(a, uses, cands, dom) -> bool:
    writes, reads, escapes = uses
    for e in escapes:
        if not any(id(r) in cands for r in roots(e.ops[1])):
            return False
    for r in reads:
        if not any(_before(w, r, dom) for w in writes):
            return False
    return True


def _before(w, r, dom) -> bool:
    if w.block is r.block:
        ins = w.block.instructions
        return ins.index(w) < ins.index(r)
    return dom.dominates(w.block, r.block)


def through(rs, local: set, lp) -> list:
    """rs with each step-local block replaced by the roots of the pointers the loop stores into
    it (recursively)."""
    out, seen = [], set()
    work = list(rs)
    while work:
        r = work.pop()
        if id(r) not in local:
            out.append(r)
            continue
        if id(r) in seen:
            continue
        seen.add(id(r))
        for b in lp.blocks:
            for i in b.instructions:
                if i.opcode == "store" and i.ops[0].type.is_ptr and \
                        any(x is r for x in roots(i.ops[1])):
                    work += roots(i.ops[0])
    return out


def is_addressing(v, local: set) -> bool:
    """Is v (defined before the loop) a step-local block or an address into one?"""
    while isinstance(v, Instruction) and v.opcode in ADDRESSING:
        v = v.ops[0]
    return id(v) in local
