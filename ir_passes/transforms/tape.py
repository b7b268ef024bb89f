"""Loop counters and the tape.

Every loop L has a counter c_L: how many iterations of L have run so far in this call, over all
entries of the loop. The forward sweep adds one on every edge that ends an iteration (back edges
and exits); the reverse sweep subtracts one on the same edges walked backwards, so at any reverse
point c_L equals its value at the matching forward point.

A value defined outside every loop is kept in a stack slot (SROA turns it back into SSA). A value
defined in loop L is kept in an array indexed by c_L: written at c_L in the forward sweep, read at
c_L from reverse code inside L and at c_L - 1 (the most recent iteration) from reverse code after
L. The arrays of a loop share one capacity. It is reserved on entering the loop and grown when an
iteration would pass it, so trip counts need not be known up front. Every array is freed when the
gradient returns, on the error path too.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import types as T
from ..ir.builder import Builder
from ..ir.values import ConstInt

INITIAL_CAPACITY = 16


@dataclass(eq=False)
class Entry:
    """One cached value: where it lives and which loop indexes it."""
    key: object
    type: T.Type
    home: object            # the Loop whose counter indexes it, or None for a stack slot
    storage: object         # alloca: the value itself (slot) or the array's base pointer (tape)
    reason: str = ""
    source: object = None   # the primal instruction, when there is one


@dataclass
class Tape:
    gradient: object
    entries: dict = field(default_factory=dict)   # key -> Entry
    counters: dict = field(default_factory=dict)  # Loop -> alloca i64
    capacity: dict = field(default_factory=dict)  # Loop -> alloca i64

    @property
    def alloca_builder(self) -> Builder:
        return self.gradient.alloca_builder

    def counter(self, loop):
        if loop not in self.counters:
            b = self.alloca_builder
            slot = b.alloca(T.i64, f"count.{loop.index}")
            b.store(ConstInt(T.i64, 0), slot)
            self.counters[loop] = slot
        return self.counters[loop]

    def entry(self, key, type: T.Type, home, reason: str = "", source=None) -> Entry:
        if key in self.entries:
            return self.entries[key]
        b = self.alloca_builder
        name = f"cache.{len(self.entries)}"
        if home is None:
            storage = b.alloca(type, name)
        else:
            storage = b.alloca(T.ptr, name)
            b.store(self.gradient.null_ptr, storage)
            self.counter(home)
            if home not in self.capacity:
                cap = b.alloca(T.i64, f"cap.{home.index}")
                b.store(ConstInt(T.i64, 0), cap)
                self.capacity[home] = cap
        e = Entry(key, type, home, storage, reason, source)
        self.entries[key] = e
        return e

    def loop_entries(self, loop) -> list[Entry]:
        return [e for e in self.entries.values() if e.home is loop]

    # --- code emission
    def index(self, b: Builder, loop, inside: bool):
        c = b.load(T.i64, self.counter(loop))
        return c if inside else b.add(c, ConstInt(T.i64, -1))

    def read(self, b: Builder, e: Entry, block):
        """Load a cached value in reverse code for primal block `block`."""
        if e.home is None:
            return b.load(e.type, e.storage)
        idx = self.index(b, e.home, block in e.home.blocks)
        base = b.load(T.ptr, e.storage)
        return b.load(e.type, b.gep(e.type, base, [idx]))

    def write(self, b: Builder, e: Entry, value) -> None:
        """Store a value in the forward sweep, where it is defined."""
        if e.home is None:
            b.store(value, e.storage)
            return
        idx = b.load(T.i64, self.counter(e.home))
        base = b.load(T.ptr, e.storage)
        b.store(value, b.gep(e.type, base, [idx]))

    def step(self, b: Builder, loop, delta: int) -> None:
        slot = self.counter(loop)
        b.store(b.add(b.load(T.i64, slot), ConstInt(T.i64, delta)), slot)

    def reserve(self, b: Builder, loop, count=None):
        """Make room for iterations c_L .. c_L + count - 1 of `loop` (one when count is None).
        Returns the block where code continues."""
        entries = self.loop_entries(loop)
        if not entries:
            return b.block
        fn = self.gradient.fn
        c = b.load(T.i64, self.counter(loop))
        need = b.add(c, count if count is not None else ConstInt(T.i64, 1))
        cap = b.load(T.i64, self.capacity[loop])
        full = b.icmp("sgt", need, cap)
        grow = fn.add_block(f"grow.{loop.index}.{len(fn.blocks)}")
        cont = fn.add_block(f"grown.{loop.index}.{len(fn.blocks)}")
        b.cbr(full, grow, cont)
        b.position(grow)
        doubled = b.mul(cap, ConstInt(T.i64, 2))
        need = b.add(need, ConstInt(T.i64, INITIAL_CAPACITY))
        new = b.select(b.icmp("sgt", doubled, need), doubled, need)
        for e in entries:
            size = b.mul(new, ConstInt(T.i64, T.size_of(e.type)))
            old = b.load(T.ptr, e.storage)
            b.store(b.call("realloc", T.ptr, [old, size]), e.storage)
        b.store(new, self.capacity[loop])
        b.br(cont)
        b.position(cont)
        return cont

    def free_all(self, b: Builder) -> None:
        for e in self.entries.values():
            if e.home is not None:
                b.call("free", T.void, [b.load(T.ptr, e.storage)])

    def bytes_per_iteration(self, loop) -> int:
        return sum(T.size_of(e.type) for e in self.loop_entries(loop))
