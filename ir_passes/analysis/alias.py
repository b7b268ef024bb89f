"""Alias and mod/ref analysis: may a write change the memory a load read?

Pointers are traced to their roots (parameters, allocas, calls, globals). Two different roots are
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

from ..ir.values import Argument, Global
from .types import roots

WRITES_NOTHING = ("llvm.lifetime", "llvm.assume", "llvm.dbg", "llvm.experimental.noalias",
                  "NRT_incref", "NRT_decref", "llvm.smax", "llvm.smin", "llvm.umax", "llvm.umin")


@dataclass
class AliasInfo:
    fn: object
    noalias_params: bool = False
    writes: list = field(default_factory=list)   # (instruction, pointer written or None = unknown)

    def may_alias_roots(self, a, b) -> bool:
        if a is b:
            return True
        for x, y in ((a, b), (b, a)):
            if getattr(x, "opcode", None) == "alloca" or is_allocation(x):
                return False  # fresh memory: nothing else points into it
            if isinstance(x, Argument) and "noalias" in x.attrs.split():
                return False
        if isinstance(a, Argument) and isinstance(b, Argument):
            return not self.noalias_params
        if isinstance(a, Global) and isinstance(b, Global):
            return a.name == b.name
        return True

    def may_alias(self, p, q) -> bool:
        return any(self.may_alias_roots(a, b) for a in roots(p) for b in roots(q))

    reach: dict = field(default_factory=dict)   # block -> blocks reachable from it (1+ edges)

    def reachable(self, a, b) -> bool:
        """Can control go from block a to block b along at least one edge?"""
        if a not in self.reach:
            seen, work = set(), list(a.successors())
            while work:
                x = work.pop()
                if x not in seen:
                    seen.add(x)
                    work.extend(x.successors())
            self.reach[a] = seen
        return b in self.reach[a]

    def may_run_after(self, first, second) -> bool:
        """May instruction `second` execute after instruction `first`?"""
        if first.block is second.block:
            ins = first.block.instructions
            if ins.index(second) > ins.index(first):
                return True
        return self.reachable(first.block, second.block)

    def clobbers(self, load) -> list:
        """The writes that may change what `load` read, after it read it."""
        p = load.ops[0]
        return [w for w, q in self.writes
                if (q is None or self.may_alias(p, q)) and self.may_run_after(load, w)]

    def unchanged(self, load) -> bool:
        if not all(isinstance(r, (Argument, Global)) for r in roots(load.ops[0])):
            return False  # local memory (stack, allocations) may be gone when the reverse runs
        return not self.clobbers(load)


def alias_analysis(fn, noalias_params: bool = False) -> AliasInfo:
    info = AliasInfo(fn, noalias_params)
    for i in fn.instructions():
        if i.opcode == "store":
            info.writes.append((i, i.ops[1]))
        elif i.opcode == "call":
            name = i.callee_name
            from ..rules.blas import DOTS
            if name.startswith("llvm.memset") or name.startswith("llvm.memcpy") or name.startswith("llvm.memmove"):
                info.writes.append((i, i.ops[0]))
            elif name in DOTS:
                info.writes.append((i, i.ops[DOTS[name].out]))
            elif not name.startswith(WRITES_NOTHING) and not _allocator_or_inactive(name) \
                    and _may_write(i):
                info.writes.append((i, None))
        elif i.opcode == "opaque" and i.flags and i.flags[0] in ("atomicrmw", "cmpxchg", "fence"):
            info.writes.append((i, i.ops[0] if i.ops else None))
    return info


def is_allocation(v) -> bool:
    from ..rules.allocators import allocation_size
    return getattr(v, "opcode", None) == "call" and allocation_size(v) is not None


def _allocator_or_inactive(name: str) -> bool:
    """Allocators return fresh memory and write no existing memory; inactive functions (frees,
    refcounts) only touch memory the reverse sweep never reads back."""
    from ..rules.allocators import ALLOCATORS
    from ..rules.registry import lookup
    if any(name in (a.alloc, a.data) for a in ALLOCATORS.values()):
        return True
    rule = lookup(name)
    return rule is not None and rule.inactive


def _may_write(call) -> bool:
    """A call writes memory unless it is a pure math function of scalars."""
    return any(o.type.is_ptr for o in call.ops) or "memory(none)" not in call.fn_attrs and \
        not _is_math(call.callee_name)


def _is_math(name: str) -> bool:
    from ..rules.registry import lookup
    rule = lookup(name)
    return rule is not None and not rule.inactive
