"""Natural loops: header, blocks, latches, exits, nesting."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UnsupportedError
from .dominators import dominators


@dataclass(eq=False)
class Loop:
    header: object
    blocks: set = field(default_factory=set)
    latches: list = field(default_factory=list)
    parent: "Loop | None" = None
    children: list = field(default_factory=list)
    index: int = 0

    @property
    def depth(self) -> int:
        return 1 + (self.parent.depth if self.parent else 0)

    def contains(self, block) -> bool:
        return block in self.blocks

    def ancestors(self) -> list["Loop"]:
        """This loop and its parents, innermost first."""
        out, lp = [], self
        while lp is not None:
            out.append(lp)
            lp = lp.parent
        return out

    def __repr__(self) -> str:
        return f"<Loop {self.index} header=%{self.header.name} blocks={len(self.blocks)}>"


@dataclass
class LoopInfo:
    loops: list = field(default_factory=list)      # outermost first
    innermost: dict = field(default_factory=dict)  # block -> innermost Loop containing it

    def loop_of(self, block) -> Loop | None:
        return self.innermost.get(block)

    def header_loop(self, block) -> Loop | None:
        lp = self.innermost.get(block)
        return lp if lp is not None and lp.header is block else None

    def loops_exited(self, src, dst) -> list[Loop]:
        """Loops containing src but not dst, innermost first."""
        lp = self.innermost.get(src)
        return [x for x in (lp.ancestors() if lp else []) if dst not in x.blocks]

    def loops_entered(self, src, dst) -> list[Loop]:
        """Loops containing dst but not src, outermost first."""
        lp = self.innermost.get(dst)
        return [x for x in (lp.ancestors() if lp else []) if src not in x.blocks][::-1]


class IrreducibleError(UnsupportedError, ValueError):
    """Control flow with a cycle that has two entries: no natural loops to reverse."""


def loop_info(fn) -> LoopInfo:
    dom = dominators(fn)
    preds = fn.predecessors()
    by_header: dict = {}
    for b in dom.order:
        for s in b.successors():
            if dom.dominates(s, b):  # back edge b -> s
                lp = by_header.setdefault(s, Loop(s))
                lp.latches.append(b)
    for lp in by_header.values():
        lp.blocks = {lp.header}
        work = list(lp.latches)
        while work:
            b = work.pop()
            if b in lp.blocks or not dom.reachable(b):
                continue
            lp.blocks.add(b)
            work.extend(preds[b])
    # a retreating edge that is not a back edge means the CFG is irreducible
    pos = {b: k for k, b in enumerate(dom.order)}
    for b in dom.order:
        for s in b.successors():
            if pos.get(s, 1 << 30) <= pos[b] and not dom.dominates(s, b):
                raise IrreducibleError(f"irreducible control flow at %{s.name}")
    loops = sorted(by_header.values(), key=lambda lp: -len(lp.blocks))
    info = LoopInfo()
    for lp in loops:  # larger loops first, so the last loop seen for a block is the innermost
        for b in lp.blocks:
            outer = info.innermost.get(b)
            info.innermost[b] = lp
            if b is lp.header and outer is not None:
                lp.parent = outer
    for k, lp in enumerate(sorted(loops, key=lambda lp: lp.depth)):
        lp.index = k
        if lp.parent:
            lp.parent.children.append(lp)
    info.loops = sorted(loops, key=lambda lp: lp.index)
    return info


def print_loops(fn) -> str:
    info = loop_info(fn)
    out = []
    for lp in info.loops:
        names = sorted(b.name for b in lp.blocks)
        out.append(f"loop {lp.index} depth {lp.depth} header {lp.header.name}: {' '.join(names)}")
    return "\n".join(out)


def reducible(module) -> bool:
    """Does every defined function of `module` (an ir.Module) have reducible control flow (only
    natural loops)? AD cannot reverse a loop with two entries."""
    for fn in module.functions.values():
        if not fn.is_declaration:
            try:
                loop_info(fn)
            except IrreducibleError:
                return False
    return True
