"""Alias and mod/ref analysis: may a write change the memory a load read?

Pointers are traced to their roots (parameters, allocas, calls, globals). The calls that yield
the data of one allocation handle, and the handle, are one root. Two different roots are
disjoint when one is an alloca or an allocation, when a parameter carries LLVM's `noalias`, or when
the caller promised that distinct pointer parameters do not overlap (`noalias_params`). A load is
*unchanged* when no instruction of the function may write memory that may alias it: then the
reverse sweep can load it again instead of caching it.

Order matters: a write only clobbers a load when it can run after it, i.e. when the write's block
is reachable from the load's (through loop back edges too: a store in a later iteration counts).
Writes that only ever happen before the load (a buffer filled, then read) do not force a cache.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.instructions import Instruction
from ..ir.printer import format_instruction
from ..ir.values import Argument, Global
from ..rules.blas import lookup_blas
from ..rules.effects import allocator_or_inactive, is_allocation, may_write, same_allocation, writes_nothing
from ..rules.registry import lookup
from .types import roots


@dataclass
class AliasInfo:
    fn: object
    noalias_params: bool = False
    writes: list = field(default_factory=list)   # (instruction, pointer written or None = unknown)
    reach: dict = field(default_factory=dict)    # block -> (its SCC's bit, bits of SCCs reachable)
    # memos, so that queries cost about O(1) each (linear time over a function):
    _roots: dict = field(default_factory=dict)   # id(pointer) -> (pointer, its roots)
    _fresh: dict = field(default_factory=dict)   # id(root) -> alloca / allocation / noalias param
    _pos: dict = field(default_factory=dict)     # block -> (length, {id(instruction): index})
    _buckets: dict = field(default_factory=dict)  # id(root) or None -> (root, write indices)
    _summary: dict = field(default_factory=dict)  # bucket key -> (last write per block, reachers)
    _clobbers: dict = field(default_factory=dict)  # id(load) -> (load, writes)
    _pred_map: dict = field(default_factory=dict)  # block -> its predecessors
    persistent: set = field(default_factory=set)  # ids of allocations alive until the reverse ends

    def roots(self, p) -> tuple:
        hit = self._roots.get(id(p))
        if hit is None:
            hit = self._roots[id(p)] = (p, tuple(roots(p)))
        return hit[1]

    def is_fresh(self, x) -> bool:
        """Nothing else points into x: an alloca, an allocation, or a `noalias` parameter."""
        hit = self._fresh.get(id(x))
        if hit is None:
            f = isinstance(x, Instruction) and x.opcode == "alloca" or is_allocation(x) or \
                isinstance(x, Argument) and "noalias" in x.attrs.split()
            hit = self._fresh[id(x)] = (x, f)
        return hit[1]

    def may_alias_roots(self, a, b) -> bool:
        if a is b or same_allocation(a, b):   # a handle and each call yielding its data
            return True
        if self.is_fresh(a) or self.is_fresh(b):
            return False
        if isinstance(a, Argument) and isinstance(b, Argument):
            return not self.noalias_params
        if isinstance(a, Global) and isinstance(b, Global):
            return a.name == b.name
        return True

    def may_alias(self, p, q) -> bool:
        return any(self.may_alias_roots(a, b) for a in self.roots(p) for b in self.roots(q))

    def reachable(self, a, b) -> bool:
        """Can control go from block a to block b along at least one edge?"""
        if not self.reach:
            self.reach = reachability(self.fn)
        ra, sb = self.reach.get(a), self.reach.get(b)
        if ra is None or sb is None:       # not a block of this function: search
            seen, work = set(), list(a.successors())
            while work:
                x = work.pop()
                if x not in seen:
                    seen.add(x)
                    work.extend(x.successors())
            return b in seen
        return bool(ra[1] >> sb[0] & 1)

    def position(self, inst) -> int:
        blk = inst.block
        hit = self._pos.get(blk)
        if hit is None or hit[0] != len(blk.instructions):
            hit = self._pos[blk] = (len(blk.instructions),
                                    {id(i): k for k, i in enumerate(blk.instructions)})
        return hit[1][id(inst)]

    def may_run_after(self, first, second) -> bool:
        """May instruction `second` execute after instruction `first`?"""
        if first.block is second.block and self.position(second) > self.position(first):
            return True
        return self.reachable(first.block, second.block)

    # --- writes grouped by the roots they write (None: unknown memory)
    def _bucket_keys(self, p) -> list:
        """Keys of the buckets whose writes may alias pointer p."""
        if not self._buckets:
            for k, (w, q) in enumerate(self.writes):
                for r in (self.roots(q) if q is not None else (None,)):
                    key = id(r) if r is not None else None
                    bucket = self._buckets.setdefault(key, (r, []))[1]
                    if not bucket or bucket[-1] != k:
                        bucket.append(k)
        rp = self.roots(p)
        return [key for key, (r, _) in self._buckets.items()
                if key is None or any(self.may_alias_roots(a, r) for a in rp)]

    def _reachers(self, key):
        """({block: last position of a write of the bucket}, blocks from which one is reachable)."""
        hit = self._summary.get(key)
        if hit is None:
            last: dict = {}
            for k in self._buckets[key][1]:
                w = self.writes[k][0]
                last[w.block] = max(last.get(w.block, -1), self.position(w))
            preds = self._preds()
            seen, work = set(last), list(last)
            while work:
                for x in preds.get(work.pop(), ()):
                    if x not in seen:
                        seen.add(x)
                        work.append(x)
            hit = self._summary[key] = (last, seen)
        return hit

    def _preds(self) -> dict:
        if not self._pred_map:
            for blk in self.fn.blocks:
                for s in blk.successors():
                    self._pred_map.setdefault(s, []).append(blk)
        return self._pred_map

    def writes_to(self, p) -> list:
        """Every write of the function that may alias pointer p, wherever it runs."""
        ks = sorted({k for key in self._bucket_keys(p) for k in self._buckets[key][1]})
        return [self.writes[k][0] for k in ks]

    def clobbered(self, load) -> bool:
        """Is there a write that may change what `load` read, after it read it?
        (The same as `bool(clobbers(load))`, without listing them.)"""
        blk = load.block
        for key in self._bucket_keys(load.ops[0]):
            last, reachers = self._reachers(key)
            if last.get(blk, -1) > self.position(load):
                return True
            if any(s in reachers for s in blk.successors()):
                return True
        return False

    def clobbers(self, load) -> list:
        """The writes that may change what `load` read, after it read it (in function order)."""
        hit = self._clobbers.get(id(load))
        if hit is None:
            ks = sorted({k for key in self._bucket_keys(load.ops[0]) for k in self._buckets[key][1]})
            ws = [self.writes[k][0] for k in ks]
            hit = self._clobbers[id(load)] = (load, [w for w in ws if self.may_run_after(load, w)])
        return list(hit[1])

    def unchanged(self, load) -> bool:
        if not all(isinstance(r, (Argument, Global)) or id(r) in self.persistent
                   for r in self.roots(load.ops[0])):
            return False  # local memory (stack, allocations) may be gone when the reverse runs
        return not self.clobbered(load)


def alias_analysis(fn, noalias_params: bool = False) -> AliasInfo:
    info = AliasInfo(fn, noalias_params)
    for i in fn.instructions():
        if i.opcode == "store":
            info.writes.append((i, i.ops[1]))
        elif i.opcode == "call":
            name = i.callee_name
            if name.startswith("llvm.memset") or name.startswith("llvm.memcpy") or name.startswith("llvm.memmove"):
                info.writes.append((i, i.ops[0]))
            elif lookup_blas(name) is not None:
                info.writes.extend((i, p) for p in lookup_blas(name).outputs(i))
            elif not writes_nothing(name) and not allocator_or_inactive(name) and may_write(i):
                info.writes.append((i, None))
        elif i.opcode == "opaque" and i.flags and i.flags[0] in ("atomicrmw", "cmpxchg", "fence"):
            info.writes.append((i, i.ops[0] if i.ops else None))
    _barriers_publish(fn, info)
    return info


def _barriers_publish(fn, info) -> None:
    """At a barrier (rules/nvptx.py) other threads' writes become visible: it may write whatever
    the function writes anywhere, and nothing else."""
    barriers = [i for i in fn.instructions() if is_barrier(i)]
    targets = [p for _, p in info.writes]
    for bar in barriers:
        info.writes.extend((bar, p) for p in targets)


def is_barrier(inst) -> bool:
    """A call whose reverse is itself: a GPU barrier or fence (registry.mirrored)."""
    rule = lookup(inst.callee_name) if inst.opcode == "call" and inst.callee_name else None
    return rule is not None and rule.mirror


def reachability(fn) -> dict:
    """{block: (k, mask)}: k numbers the block's strongly connected component, bit j of mask says
    that component j can be reached from it along 1+ edges. One pass over the condensation in
    reverse topological order (Tarjan's algorithm finds the components in that order)."""
    index, low, comp, stack, on, order = {}, {}, {}, [], set(), []
    for root in fn.blocks:
        if root in index:
            continue
        work = [(root, iter(root.successors()))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(w.successors())))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                k, members = len(order), []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp[x] = k
                    members.append(x)
                    if x is v:
                        break
                order.append(members)
    mask = [0] * len(order)
    for k, members in enumerate(order):     # successors' components come first
        m = 0
        for x in members:
            for s in x.successors():
                j = comp[s]
                if j != k:
                    m |= mask[j] | (1 << j)
                else:
                    m |= 1 << k            # a cycle: the component reaches itself
        mask[k] = m
    return {x: (comp[x], mask[comp[x]]) for x in comp}


def print_alias(fn, noalias_params: bool = False) -> str:
    """The writes of fn, numbered, with the roots of the memory each may write (`unknown` for a
    call that may write anything); then per load: `unchanged` (nothing may overwrite it until
    the function returns: the reverse sweep may load it again), the writes that may overwrite it
    after it ran, or `local memory` (gone when the reverse sweep runs)."""
    info = alias_analysis(fn, noalias_params)
    out, number = [], {}
    for k, (w, q) in enumerate(info.writes):
        number[id(w)] = k
        targets = "unknown" if q is None else " ".join(r.ref() for r in info.roots(q))
        out.append(f"write {k}: {format_instruction(w).strip()} -> {targets}")
    for i in fn.instructions():
        if i.opcode != "load":
            continue
        ws = info.clobbers(i)
        if info.unchanged(i):
            state = "unchanged"
        elif ws:
            state = "overwritten by write " + ", ".join(str(number[id(w)]) for w in ws)
        else:
            state = "local memory"
        out.append(f"load %{i.name}: {state}")
    return "\n".join(out)
