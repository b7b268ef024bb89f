"""What a gradient keeps for its reverse sweep: the data behind `explain`."""
from __future__ import annotations

from dataclasses import dataclass, field

from ....ir import types as T
from ....ir.edit import before_terminator
from ....ir.instructions import Instruction
from ....ir.values import ConstInt, Global
from ....runtime.source import fill, sections


@dataclass
class CachedValue:
    instruction: str          # the primal instruction, as LLVM text
    locations: list           # [(file, line), ...] innermost first
    reason: str               # why it is cached
    bytes: int                # bytes per entry
    loop: int | None          # the loop whose iterations index it; None: stored once
    arena: bool = False       # an input of a BLAS/LAPACK call copied into the arena (the entry
                              # holds its offset; the copy's bytes are counted per call)


@dataclass
class TapeLayout:
    counts_symbol: str | None = None   # global [slots() x i64] the last call filled (record_counts)
    loops: list = field(default_factory=list)            # loop index per entry of counts_symbol
    arena: list = field(default_factory=list)            # CachedValues copied into the arena
    bytes_per_iteration: dict = field(default_factory=dict)  # loop index -> bytes
    cached: list = field(default_factory=list)
    active: list = field(default_factory=list)           # (instruction text, locations)
    updates: list = field(default_factory=list)          # parallel loops' shadow_updates.Update
    checkpoints: list = field(default_factory=list)      # checkpoint.outline.TimeLoop per loop
    written: frozenset | None = None   # parameters the primal may write through (None: unknown)
    frame_bytes: int = 0      # a split gradient's frame (driver.public_split)
    held: list = field(default_factory=list)   # (frame offset of an i64 capacity, bytes per unit)
    counters: dict = field(default_factory=dict)   # loop index -> frame offset of its counter

    def slots(self) -> int:
        """Entries of counts_symbol: each taped loop's iterations, then the bytes each arena copy
        took, then the arena's bytes in use after the forward sweep (each copy rounded up to 16)."""
        return len(self.loops) + (len(self.arena) + 1 if self.arena else 0)

    def tape_bytes(self, counts) -> int:
        """Heap tape for one call, from the iteration counts the gradient recorded."""
        return sum(self.bytes_per_iteration[lp] * int(n) for lp, n in zip(self.loops, counts))


def layout(g) -> TapeLayout:
    out = TapeLayout()
    for e in g.tape.entries.values():
        text, locs = _entry_text(g, e)
        out.cached.append(CachedValue(text, locs, e.reason, T.size_of(e.type),
                                      e.home.index if e.home is not None else None,
                                      e.key in g.tape.arena_sizes))
    by_key = dict(zip(g.tape.entries, out.cached))
    out.arena = [by_key[k] for k in g.tape.arena_sizes]
    for lp in g.loops.loops:
        if g.tape.loop_entries(lp):
            out.loops.append(lp.index)
            out.bytes_per_iteration[lp.index] = g.tape.bytes_per_iteration(lp)
    for inst in g.primal.instructions():
        if g.act.is_active(inst) or (inst.opcode == "store" and g.act.has_shadow(inst.ops[1])):
            out.active.append((g.describe(inst), g.module.location(inst)))
    return out


def _entry_text(g, e) -> tuple[str, list]:
    """The entry's primal value (or, for control entries, what it records; for an arena copy,
    the argument copied) and its source lines (tape_keys.py: `what`, `places`)."""
    if e.source is not None and e.key not in g.tape.arena_sizes:
        # a phi has no line of its own: its block's first one
        return g.describe(e.source), g.module.location(e.source) or _located(g, e.source.block)
    for part in e.key.places():
        locs = _located(g, part)
        if locs:
            return e.key.what, locs
    return e.key.what, []


def _located(g, part) -> list:
    """Source lines of an instruction, or of the first located instruction of a block or loop."""
    if isinstance(part, Instruction):
        return g.module.location(part)
    block = getattr(part, "header", part)
    for inst in getattr(block, "instructions", ()):
        locs = g.module.location(inst)
        if locs:
            return locs
    return []


def record_counts(g, fwd, linkage: str = "define") -> None:
    """Make the forward sweep leave in a global each taped loop's iteration count, then the bytes
    each saved input took in the arena and the arena's bytes in use (TapeLayout.slots).

    linkage "define" defines the global in the module; "declare" only declares it, for a host that
    defines it once elsewhere (a host that copies a linked library into each caller)."""
    loops = [lp for lp in g.loops.loops if g.tape.loop_entries(lp)]
    fields = [g.tape.counter(lp) for lp in loops] + list(g.tape.arena_sizes.values())
    if g.tape.arena_sizes:
        fields.append(g.tape.arena[2])
    if not fields:
        return
    name = f"{g.fn.name}.tape_counts"
    declared = linkage == "declare"
    g.module.items.append(fill(sections("module_globals")["tape_counts"], NAME=name, COUNT=len(fields),
                               LINKAGE="external global" if declared else "global",
                               INIT="" if declared else " zeroinitializer"))
    glob = Global(T.ptr, name)

    def store_counts(b):
        for k, f in enumerate(fields):
            b.store(g.tape.load(b, f), b.gep(T.i64, glob, [ConstInt(T.i64, k)]))
    for blk, _ in fwd.success_exits:
        before_terminator(g.module, blk, store_counts)
    g.counts_symbol = name


def print_availability(g) -> str:
    """The availability plan of a gradient: how the reverse sweep gets each primal value it
    needed (Plan: recompute, induction, reload, restore, tape, recurrence, cache), then what the
    tape holds, with the loop that indexes each entry and why it is there."""
    out = []
    for inst in g.primal.instructions():
        how = g.avail.strategy.get(inst)
        if how is not None:
            out.append(f"%{inst.name or inst.opcode}: {how.value}")
    for e in g.tape.entries.values():
        src = e.source
        what = f"%{src.name}" if src is not None and src.name else e.key.label
        home = f"loop {e.home.index}" if e.home is not None else "once"
        out.append(f"tape {what} ({home}): {e.reason}")
    return "\n".join(out)
