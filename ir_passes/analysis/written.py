"""Which pointer parameters a function may write through: a host that must put a call's memory
back (a rerun from a snapshot) copies only those.

Conservative: a write (store, atomic, memcpy/memmove/memset destination, a call that may write
given a pointer) whose address comes from a parameter marks that parameter; one whose address
comes from anything but a parameter, a global, an alloca or a new allocation (a pointer loaded
from memory, another call's result, an integer cast to a pointer) makes the answer unknown
(None). A call that may write, given a pointer into an alloca or a new allocation, is unknown
too: that memory may hold a parameter's pointer. Calls that write nothing of the program's
(rules/effects.py: reference counts, allocators and their data accessors, frees) are skipped.
"""
from __future__ import annotations

from ..ir.values import Argument, Global
from ..rules.effects import ALLOCATORS, allocation_size, allocator_or_inactive, may_write, writes_nothing
from .types import roots

_NO_WRITE = ("llvm.lifetime.", "llvm.assume", "llvm.dbg.", "llvm.experimental.noalias",
             "llvm.invariant.", "llvm.prefetch", "llvm.stacksave", "llvm.stackrestore")
_DEST_ONLY = ("llvm.memcpy", "llvm.memmove", "llvm.memset")


def written_params(fn) -> frozenset | None:
    """Indices of `fn`'s parameters it may write memory through, or None when unknown."""
    out = set()
    for i in fn.instructions():
        op = i.opcode
        if op == "store":
            dests, local_ok = [i.ops[1]], True
        elif op in ("atomicrmw", "cmpxchg"):
            dests, local_ok = [i.ops[0]], True
        elif op == "call":
            name = i.callee_name or ""
            if name.startswith(_NO_WRITE) or not may_write(i) or writes_nothing(name) \
                    or allocator_or_inactive(name):
                continue
            if name.startswith(_DEST_ONLY):
                dests, local_ok = [i.ops[0]], True
            else:
                dests, local_ok = [o for o in i.ops if o.type.is_ptr], False
        else:
            continue
        for d in dests:
            for r in roots(d):
                if isinstance(r, Argument):
                    out.add(r.index)
                elif _local(r):
                    if not local_ok:
                        return None
                elif not isinstance(r, Global):
                    return None
    return frozenset(out)


def print_written(fn) -> str:
    """`written: %a, %c` (the parameters fn may write through), or `written: unknown`."""
    ps = written_params(fn)
    if ps is None:
        return "written: unknown"
    return "written: " + (", ".join(fn.params[i].ref() for i in sorted(ps)) or "none")


def _local(r) -> bool:
    """An alloca, or memory (or the handle of memory) an allocator returned in this call."""
    if getattr(r, "opcode", None) == "alloca":
        return True
    if getattr(r, "opcode", None) != "call":
        return False
    return allocation_size(r) is not None or any(r.callee_name == a.alloc
                                                  for a in ALLOCATORS.values())
