"""Issue loads early: move a load of a `noalias` parameter's memory up to the earliest point of
the thread's path where its address is known and nothing in between may write what it reads.

For the GPU. A thread overlaps its memory trips only when it issues a load before it waits on
an earlier one, and LLVM's NVPTX backend keeps the source order of loads and stores. A gradient
kernel loads x, computes, stores y, then loads the shadows dy and dx: three dependent trips to
memory (measured on an H100: a hand adjoint in that order runs at a quarter of the bandwidth,
and three times faster with its loads issued first; docs/cuda.md).

A load in block B moves to block A, the highest dominator of B such that
- B post-dominates A (every path from A reaches B: the load runs whenever it ran before, so it
  is no speculation) and A is in B's innermost loop (nothing enters a loop);
- no instruction on a path from the new position to the load may write memory that may alias
  it (analysis/alias.py: stores, calls, atomics, and barriers, which publish other threads'
  writes); a call to a function of the module whose attributes say `memory(none)` writes
  nothing;
- its address is a chain of getelementptr / casts of values available at the new position
  (the chain moves with it).
Within A it goes right after the last of: A's phis, the definitions it needs, the last write
that may alias it. Only loads whose pointer comes from a `noalias` parameter move: other
memory (constant tables, the frame) is left where it is, so registers are spent only on the
kernel's arrays.
"""
from __future__ import annotations

import re

from ...analysis.alias import alias_analysis
from ...analysis.dominators import dominators
from ...analysis.loops import loop_info
from ...analysis.types import roots
from ...ir.instructions import Instruction
from ...ir.values import Argument

_ADDRESS = ("getelementptr", "bitcast", "addrspacecast")
_GROUP = re.compile(r"#(\d+)")


def issue_loads_early(module, fn) -> int:
    """Move the loads of `fn` (module `module`) as described above; return how many moved."""
    pure = _pure_functions(module)
    dom = dominators(fn)
    loops = loop_info(fn)
    alias = alias_analysis(fn)
    writes = [(w, p) for w, p in alias.writes
              if not (w.opcode == "call" and w.callee_name in pure)]
    moved = 0
    for block in list(dom.order):
        for load in list(block.instructions):
            if load.opcode != "load" or load.volatile or load.flags or not _from_noalias(load):
                continue
            if _move(load, block, dom, loops, alias, writes):
                moved += 1
    return moved


def _from_noalias(load) -> bool:
    rs = roots(load.ops[0])
    return bool(rs) and all(isinstance(r, Argument) and "noalias" in r.attrs.split() for r in rs)


def _move(load, block, dom, loops, alias, writes) -> bool:
    best = None
    target = block
    while dom.idom.get(target) is not None and dom.idom[target] is not target:
        up = dom.idom[target]
        if loops.loop_of(up) is not loops.loop_of(block):
            break
        region = _between(up, block)
        if region is None:
            break
        chain = _address_chain(load.ops[0], up, dom)
        if chain is None:
            break
        if _clobbered(load, region, block, writes, alias):
            break
        where = _position(up, chain, load, writes, alias)
        if where is None:
            break
        best = (up, where, chain)
        if where > _first_position(up):       # stopped inside `up`: nothing higher is legal
            break
        target = up
    if best is None:
        return False
    up, where, chain = best
    for inst in chain + [load]:
        inst.block.instructions.remove(inst)
    for k, inst in enumerate(chain + [load]):
        up.insert(where + k, inst)
    return True


def _between(a, b):
    """The blocks on paths from a's end to b (b excluded), or None when some path from a never
    reaches b or comes back to a."""
    seen, work = set(), list(a.successors())
    while work:
        x = work.pop()
        if x is b or x in seen:
            continue
        if x is a or not x.successors():
            return None
        seen.add(x)
        work.extend(x.successors())
    return seen


def _address_chain(ptr, up, dom) -> list | None:
    """The instructions computing `ptr` that must move above `up`'s end (in order), or None."""
    chain: list = []

    def need(v) -> bool:
        if not isinstance(v, Instruction):
            return True
        if v.block is up or dom.dominates(v.block, up):
            return True
        if v.opcode not in _ADDRESS or v in chain:
            return v in chain
        if not all(need(o) for o in v.ops):
            return False
        chain.append(v)
        return True

    return chain if need(ptr) else None


def _clobbered(load, region, block, writes, alias) -> bool:
    """May a write in `region`, or before the load in its own block, change what it reads?"""
    ptr = load.ops[0]
    before = set(map(id, block.instructions[:block.instructions.index(load)]))
    for w, p in writes:
        if w.block in region or w.block is block and id(w) in before:
            if p is None or alias.may_alias(ptr, p):
                return True
    return False


def _first_position(blk) -> int:
    return sum(1 for i in blk.instructions if i.opcode == "phi")


def _position(up, chain, load, writes, alias) -> int | None:
    """Where in `up` the chain and load go: after its phis, the values they use, and the last
    write that may alias the load (None when the block's terminator is one)."""
    where = _first_position(up)
    used = {id(o) for inst in chain + [load] for o in inst.ops}
    clobbers = {id(w) for w, p in writes if w.block is up and
                (p is None or alias.may_alias(load.ops[0], p))}
    for k, inst in enumerate(up.instructions):
        if id(inst) in used or id(inst) in clobbers:
            where = k + 1
    if where >= len(up.instructions):
        return None
    return where


def _pure_functions(module) -> set:
    """Names of the functions the module defines or declares with `memory(none)` (in their
    attributes or attribute group)."""
    groups = {}
    for item in module.items:
        if isinstance(item, str) and item.startswith("attributes #"):
            m = _GROUP.match(item[len("attributes "):])
            if m:
                groups[m.group(1)] = item
    names = set()
    for f in module.functions.values():
        attrs = (f.raw or f.suffix) + " " + " ".join(groups.get(g, "") for g in _GROUP.findall(f.suffix))
        if "memory(none)" in attrs or " readnone" in attrs:
            names.add(f.name)
    return names
