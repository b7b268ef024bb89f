"""How the reverse sweep adds into shadow memory, when the function runs as many threads at once.

Sequential code (the default) adds with a plain load / add / store. A function that runs as many
threads at once (a GPU kernel; `reverse_mode(..., threads=Threads(...))`) may have several
threads add into one shadow location at the same time; analysis/sharing.py says, per primal
access, whether that can happen:

- private (only this thread touches the location: `y[i]` with i the global thread index): plain;
- uniform (every thread adds into the same location: `w[0]`, an Active scalar's derivative), and
  the memory is never written: privatised. The thread adds into a register; at the end of the
  gradient the block sums the registers in shared memory and one thread adds the sum atomically
  (`Threads.block_sum`; at most `max_privatised` locations, the rest atomic);
- owned (`Threads.owned`: memory of which each thread has its own copy, such as a parallel
  loop's privatised arrays, transforms/reverse/parallel_private.py): plain;
- shared (anything else: a gather `x[idx[i]]`, `x[j]` in a loop over j): `atomicrmw fadd`.
  LLVM's backend makes it a hardware atomic where the target has one (sm_60+ for double) and a
  compare-and-swap loop elsewhere. With `Threads.warp_add` the add goes through the target's
  warp-aggregated helper (runtime/warp_add.py): when a converged warp adds into one address
  (`pos[j]` at the same j in every thread), the lanes sum first and one atomic is made.

The reverse of a store reads the shadow and zeroes it. A primal without data races writes a
location in one thread only between two barriers, and no other thread reads it there, so that is
plain too; when the store's address is not private it is an atomic exchange with zero, so that
of several threads storing the same value only one receives its adjoint.

`report` lists each decision for `explain`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...analysis.sharing import sharing_analysis
from ...ir import types as T
from ...ir.instructions import Instruction
from ...ir.values import Argument, ConstFloat, ConstInt
from ...runtime.block_sum import ensure as ensure_block_sum
from ...runtime.warp_add import ensure as ensure_warp_add
from ..common.atomics import atomic

PLAIN, PRIVATE, PRIVATISED, ATOMIC = "plain", "private", "privatised per block", "atomic"
PER_TASK = "privatised per thread"


@dataclass(frozen=True)
class Threads:
    """The function runs as many threads at once. `iterations(fn)` returns the
    analysis.sharing.Iterations of the primal `fn` (what indexes a thread). `block_sum`: the
    target's block reduction for privatised updates ("nvptx"), or None for atomics only.
    `warp_add`: shared updates go through the NVPTX warp-aggregated add (sm_70 and later).
    `owned(p)`: is p in memory whose shadow each thread gets a copy of (a parallel loop's
    privatised arrays: parallel_launch.py sums the copies), so that adding into it is plain."""
    iterations: Callable
    block_sum: str | None = None
    max_privatised: int = 4
    warp_add: bool = False
    owned: Callable | None = None


@dataclass
class Update:
    """One shadow update of the gradient: the primal instruction (text), where, and how."""
    instruction: str
    location: tuple | None
    how: str
    reason: str = ""


class ShadowUpdates:
    def __init__(self, g, threads: Threads | None):
        self.g, self.threads = g, threads
        self.sharing = None
        if threads is not None:
            self.sharing = sharing_analysis(g.primal, threads.iterations(g.primal), g.alias)
        self.slots: dict = {}          # id(pointer) -> (slot, pointer, type)
        self.report: list[Update] = []
        self._seen: set = set()

    # --- decisions
    def how(self, p, ty) -> str:
        """How additions into the shadow of p (float type ty) are made; a privatised location
        gets its register now."""
        if self.sharing is None:
            return PLAIN
        kind = self.sharing.pointer_kind(p)
        if kind == "private":
            return PRIVATE
        if self.threads.owned is not None and self.threads.owned(p):
            return PER_TASK
        if kind == "uniform" and self._can_privatise(p):
            self._slot(p, ty)
            return PRIVATISED
        return ATOMIC

    def _can_privatise(self, p) -> bool:
        if id(p) in self.slots:
            return True
        if self.threads.block_sum is None or self.g.alias.writes_to(p):
            return False
        return len(self.slots) < self.threads.max_privatised and _rebuildable(p)

    def note(self, inst, how, reason="") -> None:
        if inst is None or id(inst) in self._seen:
            return
        self._seen.add(id(inst))
        self.report.append(Update(self.g.describe(inst), self.g.locate(inst), how, reason))

    # --- code
    def accumulate(self, b, p, sp, d, align=None, inst=None) -> None:
        """shadow(p) += d, where sp is p's shadow at b (inst: the primal access, for the report)."""
        how = self.how(p, d.type)
        self.note(inst, how, self._reason(inst))
        if how in (PLAIN, PRIVATE, PER_TASK):
            b.store(b.accumulate(b.load(d.type, sp, align=align), d), sp, align=align)
        elif how == PRIVATISED:
            slot = self._slot(p, d.type)
            b.store(b.accumulate(b.load(d.type, slot), d), slot)
        elif self.threads.warp_add:
            b.call(ensure_warp_add(self.g.module, d.type), T.void, [sp, d])
        else:
            atomic(b, "fadd", sp, d, align)

    def consume(self, b, p, sp, ty, align=None, keep=False, inst=None):
        """The shadow of a location a primal store overwrote: read it, and zero it unless keep."""
        how = PLAIN if self.sharing is None or keep else \
            (PRIVATE if self.sharing.pointer_kind(p) == "private" else
             PER_TASK if self.threads.owned is not None and self.threads.owned(p) else ATOMIC)
        self.note(inst, how, self._reason(inst))
        if how != ATOMIC:
            d = b.load(ty, sp, align=align)
            if not keep:
                b.store(ConstFloat(ty, 0.0), sp, align=align)
            return d
        return atomic(b, "xchg", sp, ConstFloat(ty, 0.0), align)

    def add_out(self, b, out, d, param=None) -> None:
        """*out += d for an Active parameter's derivative: every thread adds into one place."""
        if self.sharing is None:
            b.store(b.accumulate(b.load(d.type, out), d), out)
            return
        what = f"the derivative of Active parameter %{getattr(param, 'name', '?')}"
        if self.threads.block_sum is not None:
            self.report.append(Update(what, None, PRIVATISED, "every thread adds into it"))
            self._block_sum(b, out, d)
        else:
            self.report.append(Update(what, None, ATOMIC, "every thread adds into it"))
            atomic(b, "fadd", out, d, None)

    def finish(self, b) -> None:
        """At the gradient's end: the privatised locations get their block sums."""
        for slot, p, ty in self.slots.values():
            self._block_sum(b, self._shadow_of(b, p), b.load(ty, slot))

    # --- helpers
    def _reason(self, inst) -> str:
        if self.sharing is None or inst is None:
            return ""
        a = self.sharing.accesses.get(id(inst))
        return a.reason if a is not None else ""

    def _slot(self, p, ty):
        if id(p) not in self.slots:
            ab = self.g.alloca_builder
            slot = ab.alloca(ty, "priv." + (getattr(p, "name", "") or "p"))
            ab.store(ConstFloat(ty, 0.0), slot)
            self.slots[id(p)] = (slot, p, ty)
        return self.slots[id(p)][0]

    def _shadow_of(self, b, p):
        """p's shadow, rebuilt at the gradient's end from parameters and constants."""
        if isinstance(p, Argument):
            return self.g.shadow_params[p.index]
        base = self._shadow_of(b, p.ops[0])
        if p.opcode == "getelementptr":
            idx = [self.g.params[i.index] if isinstance(i, Argument) else i for i in p.ops[1:]]
            return b.gep(p.source_type, base, idx, flags=list(p.flags))
        return base

    def _block_sum(self, b, dst, v) -> None:
        name = ensure_block_sum(self.g.module, self.threads.block_sum, v.type)
        b.call(name, T.void, [dst, v])


def _rebuildable(p) -> bool:
    """A chain of geps and casts from a parameter with constant or parameter indices."""
    while isinstance(p, Instruction):
        if p.opcode == "getelementptr":
            if not all(isinstance(i, (ConstInt, Argument)) for i in p.ops[1:]):
                return False
        elif p.opcode not in ("bitcast", "addrspacecast"):
            return False
        p = p.ops[0]
    return isinstance(p, Argument)
