"""Dominator tree (Cooper, Harvey and Kennedy's iterative algorithm)."""
from __future__ import annotations

from dataclasses import dataclass, field


def reverse_postorder(fn) -> list:
    seen, order = set(), []
    stack = [(fn.entry, iter(fn.entry.successors()))]
    seen.add(fn.entry)
    while stack:
        block, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            order.append(block)
        elif nxt not in seen:
            seen.add(nxt)
            stack.append((nxt, iter(nxt.successors())))
    return order[::-1]


@dataclass
class Dominators:
    idom: dict = field(default_factory=dict)
    order: list = field(default_factory=list)  # reverse postorder of reachable blocks

    interval: dict = field(default_factory=dict)   # block -> (enter, leave) in a walk of the tree

    def dominates(self, a, b) -> bool:
        """Does block a dominate block b? (O(1): a's interval of the tree walk holds b's.)"""
        if a is b:
            return True
        if not self.interval:
            self._number()
        ia, ib = self.interval.get(a), self.interval.get(b)
        return ia is not None and ib is not None and ia[0] < ib[0] and ib[1] <= ia[1]

    def _number(self) -> None:
        children: dict = {}
        root = None
        for b, d in self.idom.items():
            if d is b:
                root = b
            else:
                children.setdefault(d, []).append(b)
        clock, stack = 0, [(root, False)] if root is not None else []
        enter: dict = {}
        while stack:
            b, done = stack.pop()
            clock += 1
            if done:
                self.interval[b] = (enter[b], clock)
                continue
            enter[b] = clock
            stack.append((b, True))
            stack.extend((c, False) for c in children.get(b, ()))

    def reachable(self, b) -> bool:
        return b in self.idom


def dominators(fn) -> Dominators:
    order = reverse_postorder(fn)
    index = {b: k for k, b in enumerate(order)}
    preds = fn.predecessors()
    idom = {fn.entry: fn.entry}

    def intersect(a, b):
        while a is not b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            ps = [p for p in preds[b] if p in idom]
            new = ps[0]
            for p in ps[1:]:
                new = intersect(p, new)
            if idom.get(b) is not new:
                idom[b] = new
                changed = True
    return Dominators(idom, order)


def print_dominators(fn) -> str:
    d = dominators(fn)
    return "\n".join(f"{b.name}: idom {d.idom[b].name}" for b in d.order)
