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
  loop's privatised arrays, transforms/reverse/parallel/parallel_private.py): plain;
- shared (anything else: a gather `x[idx[i]]`, `x[j]` in a loop over j): `atomicrmw fadd`.
  LLVM's backend makes it a hardware atomic where the target has one (sm_60+ for double) and a
  compare-and-swap loop elsewhere. With `Threads.warp_add` the add goes through the target's
  warp-aggregated helper (runtime/warp_add.py): when a converged warp adds into one address
  (`pos[j]` at the same j in every thread), the lanes sum first and one atomic is made.

The reverse of a store reads the shadow and zeroes it. A primal without data races writes a
location in one thread only between two barriers, and no other thread reads it there, so that is
plain too; when the store's address is not private it is an atomic exchange with zero, so that
of several threads storing the same value only one receives its adjoint.

With `Threads.wide` the float32 adjoints are summed in float64 (a float32 sum of many terms
loses a small result to rounding where large ones cancel): every float32 adjoint the reverse
sweep accumulates in a register is a double, and the shadows of the parameters in `wide` are
float64 memory laid out with twice the float32 offsets (element k of a float32 array at byte
8k), which the caller fills from the float32 shadow before and rounds back once after.

With `Threads.deterministic` no float is added atomically: the block sums store each block's sum
in a slot of its own and the block that finishes last adds the slots in block order
(runtime/block_sum.py); an update that would be atomic is left for the caller to refuse
(`report`). `sites` counts the sums, each with a slot per block in the kernel's scratch memory.

`report` lists each decision for `explain`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ....analysis.sharing import sharing_analysis
from ....ir import types as T
from ....ir.instructions import Instruction
from ....ir.values import Argument, ConstFloat, ConstInt
from ....runtime.block_sum import ensure as ensure_block_sum, ensure_deterministic
from ....runtime.warp_add import ensure as ensure_warp_add
from ...common.atomics import atomic

PLAIN, PRIVATE, PRIVATISED, ATOMIC = "plain", "private", "privatised per block", "atomic"
PER_TASK = "privatised per thread"
IN_ORDER = "privatised per block, the blocks' sums added in block order"


@dataclass(frozen=True)
class Threads:
    """The function runs as many threads at once. `iterations(fn)` returns the
    analysis.sharing.Iterations of the primal `fn` (what indexes a thread). `block_sum`: the
    target's block reduction for privatised updates ("nvptx"), or None for atomics only.
    `warp_add`: shared updates go through the NVPTX warp-aggregated add (sm_70 and later).
    `owned(p)`: is p in memory whose shadow each thread gets a copy of (a parallel loop's
    privatised arrays: parallel_launch.py sums the copies), so that adding into it is plain.
    `wide`: None, or float32 adjoints are summed in float64 and the parameters with these
    indices have float64 shadows, as do float32 Active parameters' derivative outputs.
    `deterministic`: block sums in a fixed order, no float atomics (the module docstring)."""
    iterations: Callable
    block_sum: str | None = None
    max_privatised: int = 4
    warp_add: bool = False
    owned: Callable | None = None
    wide: frozenset | None = None
    deterministic: bool = False


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
        self.sites: list = []          # deterministic block sums: (destination, type)

    # --- decisions
    def how(self, p, ty) -> str:
        """How additions into the shadow of p (float type ty) are made; a privatised location
        gets its register now."""
        if self.sharing is None:
            return PLAIN
        ty = self.memory_type(p, ty)            # a privatised float32 is summed in a double
        kind = self.sharing.pointer_kind(p)
        if kind == "private":
            return PRIVATE
        if self.threads.owned is not None and self.threads.owned(p):
            return PER_TASK
        if kind == "uniform" and self._can_privatise(p):
            self._slot(p, ty)
            return IN_ORDER if self.threads.deterministic else PRIVATISED
        return ATOMIC

    def _can_privatise(self, p) -> bool:
        if id(p) in self.slots:
            return True
        if self.threads.block_sum is None or self.g.alias.writes_to(p):
            return False
        room = self.threads.deterministic or len(self.slots) < self.threads.max_privatised
        return room and _rebuildable(p)

    def note(self, inst, how, reason="") -> None:
        if inst is None or id(inst) in self._seen:
            return
        self._seen.add(id(inst))
        self.report.append(Update(self.g.describe(inst), self.g.locate(inst), how, reason))

    # --- code
    def accumulate(self, b, p, sp, d, align=None, inst=None, ty=None) -> None:
        """shadow(p) += d, where sp is p's shadow at b (inst: the primal access, for the report;
        ty: the type of the data at p, when d is summed in a wider one)."""
        ty = ty or d.type
        mty = self.memory_type(p, ty)
        d = convert(b, d, mty)
        how = self.how(p, ty)
        self.note(inst, how, self._reason(inst))
        if how in (PRIVATISED, IN_ORDER):
            slot = self._slot(p, mty)
            b.store(b.accumulate(b.load(mty, slot), d), slot)
            return
        sp, ty, align = self.memory(b, p, sp, ty, align)
        if how in (PLAIN, PRIVATE, PER_TASK):
            b.store(b.accumulate(b.load(ty, sp, align=align), d), sp, align=align)
        elif self.threads.warp_add:
            b.call(ensure_warp_add(self.g.module, d.type), T.void, [sp, d])
        else:
            atomic(b, "fadd", sp, d, align)

    def consume(self, b, p, sp, ty, align=None, keep=False, inst=None):
        """The shadow of a location a primal store overwrote: read it, and zero it unless keep;
        in the type adjoints of type ty are summed in."""
        how = PLAIN if self.sharing is None or keep else \
            (PRIVATE if self.sharing.pointer_kind(p) == "private" else
             PER_TASK if self.threads.owned is not None and self.threads.owned(p) else ATOMIC)
        self.note(inst, how, self._reason(inst))
        sp, mty, align = self.memory(b, p, sp, ty, align)
        if how != ATOMIC:
            d = b.load(mty, sp, align=align)
            if not keep:
                b.store(ConstFloat(mty, 0.0), sp, align=align)
        else:
            d = atomic(b, "xchg", sp, ConstFloat(mty, 0.0), align)
        return convert(b, d, self.adjoint_type(ty))

    def read(self, b, p, sp, ty, align=None):
        """The shadow of p, in the type adjoints of type ty are summed in."""
        sp, mty, align = self.memory(b, p, sp, ty, align)
        return convert(b, b.load(mty, sp, align=align), self.adjoint_type(ty))

    def zero(self, b, p, sp, ty, align=None) -> None:
        """shadow(p) = 0 (a store of inactive data)."""
        sp, mty, align = self.memory(b, p, sp, ty, align)
        b.store(ConstFloat(mty, 0.0), sp, align=align)

    # --- float64 sums of float32 adjoints (Threads.wide)
    @property
    def wide(self) -> bool:
        return self.threads is not None and self.threads.wide is not None

    def adjoint_type(self, t):
        """The type a float adjoint of type t is summed in."""
        return T.f64 if self.wide and t == T.f32 else t

    def memory(self, b, p, sp, ty, align):
        """(address, type, alignment) of the shadow of p (at sp) for data of type ty: in a wide
        shadow a float32's adjoint is a double at twice its offset from the shadow's start."""
        if self.memory_type(p, ty) == ty:
            return sp, ty, align
        base = self.g.shadow_params[self._wide_root(p).index]
        offset = b.sub(b.cast("ptrtoint", sp, T.i64), b.cast("ptrtoint", base, T.i64))
        return b.gep(T.i8, sp, [offset]), T.f64, None if align is None else 2 * align

    def memory_type(self, p, ty):
        """The type of p's shadow in memory, for data of type ty."""
        if not self.wide or self._wide_root(p) is None:
            return ty
        if ty != T.f32:      # a float32 array read as another type: its offsets do not scale
            raise self.g.unsupported(f"a float32 array with float64 sums accessed as {ty}", p,
                                     "Differentiate without float64 sums.")
        return T.f64

    def _wide_root(self, p):
        roots = self.g.alias.roots(p)
        wide = [r for r in roots if isinstance(r, Argument) and r.index in self.threads.wide]
        if not wide:
            return None
        if len({id(r) for r in roots}) != 1:
            raise self.g.unsupported("a pointer that may point into several arrays, one of them "
                                     "float32 with float64 sums", p)
        return wide[0]

    def add_out(self, b, out, d, param=None) -> None:
        """*out += d for an Active parameter's derivative: every thread adds into one place."""
        if self.sharing is None:
            b.store(b.accumulate(b.load(d.type, out), d), out)
            return
        d = convert(b, d, self.adjoint_type(getattr(param, "type", d.type)))
        what = f"the derivative of Active parameter %{getattr(param, 'name', '?')}"
        if self.threads.block_sum is not None:
            how = IN_ORDER if self.threads.deterministic else PRIVATISED
            self.report.append(Update(what, None, how, "every thread adds into it"))
            self._block_sum(b, out, d)
        else:
            self.report.append(Update(what, None, ATOMIC, "every thread adds into it"))
            atomic(b, "fadd", out, d, None)

    def finish(self, b) -> None:
        """At the gradient's end: the privatised locations get their block sums."""
        for slot, p, ty in self.slots.values():
            dst = self._shadow_of(b, p)
            if self.memory_type(p, T.f32) == ty == T.f64:
                dst = self.memory(b, p, dst, T.f32, None)[0]
            self._block_sum(b, dst, b.load(ty, slot))
        if self.sites:        # deterministic: the last block adds every site's slots in order
            names = [ensure_deterministic(self.g.module, self.threads.block_sum, t)
                     for _, t in self.sites]
            last = b.call(names[0][2], T.i1, [])
            for k, ((dst, _), (_, total, _)) in enumerate(zip(self.sites, names)):
                b.call(total, T.void, [dst, ConstInt(T.i32, k), last])

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
        if self.threads.deterministic:
            name = ensure_deterministic(self.g.module, self.threads.block_sum, v.type)[0]
            b.call(name, T.void, [ConstInt(T.i32, len(self.sites)), v])
            self.sites.append((dst, v.type))
            return
        name = ensure_block_sum(self.g.module, self.threads.block_sum, v.type)
        b.call(name, T.void, [dst, v])


def convert(b, v, t):
    """v as float type t (fpext or fptrunc between float and double)."""
    if v.type == t:
        return v
    return b.cast("fpext" if T.size_of(t) > T.size_of(v.type) else "fptrunc", v, t)


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
