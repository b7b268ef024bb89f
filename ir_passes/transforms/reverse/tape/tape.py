"""Loop counters and the tape.

Every loop L has a counter c_L: how many iterations of L have run so far in this call, over all
entries of the loop. The forward sweep adds one on every edge that ends an iteration (back edges
and exits); the reverse sweep subtracts one on the same edges walked backwards, so at any reverse
point c_L equals its value at the matching forward point.

A value defined outside every loop is kept in a stack slot (SROA turns it back into SSA). A value
defined in loop L is kept in an array indexed by c_L: written at c_L in the forward sweep, read at
c_L from reverse code inside L and at c_L - 1 (the most recent iteration) from reverse code after
L. The arrays of a loop share one capacity. It is reserved on entering the loop and grown when an
iteration would pass it, so trip counts need not be known up front. A top-level loop whose trip
count has a small constant bound (`gradient.fixed_trips`, set for kernels that run as many
threads: a GPU thread's heap is slow and small) keeps its arrays in the frame instead. Every array is freed when the
gradient returns, on the error path too. All of this memory comes from the module's heap
(heap.py: libc unless the caller names other functions).

All of this state (counters, capacities, slots, array pointers) lives in one *frame*: fields at
fixed offsets from a frame pointer. In a combined gradient the frame is an alloca that SROA splits
back into registers; a split gradient (an augmented forward and a reverse, used for calls and
recursion) mallocs it in the forward and frees it at the end of the reverse.

A top-level gradient keeps its tape arrays between calls: on exit it parks their pointers and
capacities in a workspace slot (a global, swapped atomically so concurrent calls stay correct) and
the next call takes them back, so a repeat call with the same shapes allocates no tape at all.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ....ir import types as T
from ....ir.builder import Builder, MathBuilder
from ....ir.edit import splice
from ....ir.instructions import Instruction
from ....ir.module import Block, Function
from ....ir.values import ConstInt, Global, Placeholder
from ....runtime import heap
from ....runtime.helpers import ensure, release_objects
from .retain import release_all

INITIAL_CAPACITY = 16


@dataclass(eq=False)
class Field:
    """A fixed offset in the frame."""
    offset: int
    type: T.Type


class Frame:
    def __init__(self):
        self.size = 0
        self.pointer = Placeholder(T.ptr, "frame")   # replaced by the frame pointer of each function

    def field(self, type: T.Type) -> Field:
        size = T.size_of(type)
        align = min(8, max(1, size))
        self.size = (self.size + align - 1) // align * align
        f = Field(self.size, type)
        self.size += size
        return f

    def address(self, b: Builder, field: Field):
        if field.offset == 0:
            return self.pointer
        return b.gep(T.i8, self.pointer, [ConstInt(T.i64, field.offset)])


@dataclass(eq=False)
class Entry:
    """One cached value: where it lives and which loop indexes it."""
    key: object
    type: T.Type
    home: object            # the Loop whose counter indexes it, or None for a slot
    storage: Field          # frame field: the value itself (slot) or the array's base pointer (tape)
    reason: str = ""
    source: object = None   # the primal instruction, when there is one


@dataclass
class Tape:
    gradient: object
    entries: dict = field(default_factory=dict)   # key -> Entry
    counters: dict = field(default_factory=dict)  # Loop -> Field i64
    capacity: dict = field(default_factory=dict)  # Loop -> Field i64
    frame: Frame = field(default_factory=Frame)
    buffers: list = field(default_factory=list)   # scratch buffers' fields (ptr, capacity)
    by_loop: dict = field(default_factory=dict)   # Loop -> its entries, in order
    allocations: Field | None = None   # the list of this call's shadow allocations, once needed
    children: Field | None = None      # the list of callee frames, once needed
    release_markers: list = field(default_factory=list)   # (marker, failed) where free_all was
    arena: tuple | None = None    # rules/blas.py's saved inputs: (buffer, capacity, used) fields
    arena_sizes: dict = field(default_factory=dict)   # saved input's key -> i64 Field: its bytes this call
    on_release: list = field(default_factory=list)    # f(b, failed): more to do where the call releases
    objects: dict = field(default_factory=dict)   # a host's release function -> Field: a list of
    #                                               the shadow objects this call made
    kept_in_frame: bool = False   # a split frame kept between calls: its arrays are not freed

    @property
    def init_builder(self) -> Builder:
        """Builds in the block that initializes the frame."""
        return self.gradient.init_builder

    def new_field(self, type: T.Type, init=None) -> Field:
        f = self.frame.field(type)
        if init is not None:
            b = self.init_builder
            b.store(init, self.frame.address(b, f))
        return f

    def load(self, b: Builder, f: Field):
        return b.load(f.type, self.frame.address(b, f))

    def store(self, b: Builder, value, f: Field) -> None:
        b.store(value, self.frame.address(b, f))

    def counter(self, loop) -> Field:
        if loop not in self.counters:
            self.counters[loop] = self.new_field(T.i64, ConstInt(T.i64, 0))
        return self.counters[loop]

    def entry(self, key, type: T.Type, home, reason: str = "", source=None) -> Entry:
        if key in self.entries:
            return self.entries[key]
        fixed = self.fixed_capacity(home)
        if home is None:
            storage = self.new_field(type)
        elif fixed:
            array = self.frame.field(T.ArrayType(fixed, type))
            storage = self.new_field(T.ptr, None)
            b = self.init_builder
            b.store(self.frame.address(b, array), self.frame.address(b, storage))
            self.counter(home)
            if home not in self.capacity:
                self.capacity[home] = self.new_field(T.i64, ConstInt(T.i64, fixed))
        else:
            storage = self.new_field(T.ptr, self.gradient.null_ptr)
            self.counter(home)
            if home not in self.capacity:
                self.capacity[home] = self.new_field(T.i64, ConstInt(T.i64, 0))
        e = Entry(key, type, home, storage, reason, source)
        self.entries[key] = e
        self.by_loop.setdefault(home, []).append(e)
        return e

    def arena_fields(self) -> tuple:
        """The arena's fields (buffer, capacity, bytes used), made on first use: rules/blas.py's
        saved inputs and scratch matrices, parked with the tape between calls."""
        if self.arena is None:
            buf = self.new_field(T.ptr, self.gradient.null_ptr)
            cap = self.new_field(T.i64, ConstInt(T.i64, 0))
            used = self.new_field(T.i64, ConstInt(T.i64, 0))
            self.buffers += [buf, cap]
            self.arena = (buf, cap, used)
        return self.arena

    def count_arena_bytes(self, b, key, size) -> None:
        """Add `size` to the bytes saved input `key` took in the arena this call (`explain`)."""
        if key not in self.arena_sizes:
            self.arena_sizes[key] = self.new_field(T.i64, ConstInt(T.i64, 0))
        f = self.arena_sizes[key]
        self.store(b, b.add(self.load(b, f), size), f)

    def fixed_capacity(self, loop) -> int:
        """The iterations the frame holds for `loop` (0: its arrays are on the heap)."""
        return self.gradient.fixed_trips.get(loop, 0) if loop is not None else 0

    def heap_entries(self) -> list[Entry]:
        return [e for e in self.entries.values()
                if e.home is not None and not self.fixed_capacity(e.home)]

    def loop_entries(self, loop) -> list[Entry]:
        return list(self.by_loop.get(loop, ()))

    # --- code emission
    def index(self, b: Builder, loop, inside: bool):
        c = self.load(b, self.counter(loop))
        return c if inside else b.add(c, ConstInt(T.i64, -1))

    def read(self, b: Builder, e: Entry, block):
        """Load a cached value in reverse code for primal block `block`."""
        if e.home is None:
            return self.load(b, e.storage)
        idx = self.index(b, e.home, block in e.home.blocks)
        base = self.load(b, e.storage)
        return b.load(e.type, b.gep(e.type, base, [idx]))

    def write(self, b: Builder, e: Entry, value) -> None:
        """Store a value in the forward sweep, where it is defined."""
        if e.home is None:
            self.store(b, value, e.storage)
            return
        idx = self.load(b, self.counter(e.home))
        base = self.load(b, e.storage)
        b.store(value, b.gep(e.type, base, [idx]))

    def step(self, b: Builder, loop, delta: int) -> None:
        f = self.counter(loop)
        self.store(b, b.add(self.load(b, f), ConstInt(T.i64, delta)), f)

    def reserve(self, b: Builder, loop, count=None):
        """Make room for iterations c_L .. c_L + count - 1 of `loop` (one when count is None).
        Returns the block where code continues."""
        entries = self.loop_entries(loop)
        if not entries or self.fixed_capacity(loop):
            return b.block
        c = self.load(b, self.counter(loop))
        need = b.add(c, count if count is not None else ConstInt(T.i64, 1))
        cap = self.load(b, self.capacity[loop])
        full = b.icmp("sgt", need, cap)
        grow = self.gradient.new_block(f"grow.{loop.index}")
        cont = self.gradient.new_block(f"grown.{loop.index}")
        b.cbr(full, grow, cont)
        b.position(grow)
        doubled = b.mul(cap, ConstInt(T.i64, 2))
        if count is None:      # grown one iteration at a time: start with some room
            need = b.add(need, ConstInt(T.i64, INITIAL_CAPACITY))
        new = b.select(b.icmp("sgt", doubled, need), doubled, need)
        for e in entries:
            width = ConstInt(T.i64, T.size_of(e.type))
            size = b.mul(new, width)
            old = self.load(b, e.storage)
            grown = heap.reallocate(b, old, size, lambda: b.mul(cap, width))
            self.store(b, grown, e.storage)
        self.store(b, new, self.capacity[loop])
        b.br(cont)
        b.position(cont)
        return cont

    def allocation_list(self) -> Field:
        """The frame's list of shadow allocations made by this call ({data, count, capacity})."""
        if self.allocations is None:
            self.allocations = self.new_field(T.ArrayType(24, T.i8))
            b = self.init_builder
            b.call("llvm.memset.p0.i64", T.void, [self.frame.address(b, self.allocations),
                                                 ConstInt(T.i8, 0), ConstInt(T.i64, 24),
                                                 ConstInt(T.i1, 0)])
        return self.allocations

    def object_list(self, free: str) -> Field:
        """The frame's list of shadow objects released with `free` (a shadow container), made
        on first need; released where the call releases."""
        if free not in self.objects:
            f = self.objects[free] = self.new_field(T.ArrayType(24, T.i8))
            b = self.init_builder
            b.call("llvm.memset.p0.i64", T.void, [self.frame.address(b, f), ConstInt(T.i8, 0),
                                                 ConstInt(T.i64, 24), ConstInt(T.i1, 0)])
            name = release_objects(self.gradient.module, free)
            self.on_release.append(
                lambda b, failed: b.call(name, T.void, [self.frame.address(b, f)]))
        return self.objects[free]

    def free_all(self, b: Builder, failed: bool = False) -> None:
        """Release what this call allocated (a marker: the code depends on entries made later).
        `failed`: the call is returning an error, so callee frames were never reversed."""
        m = b.emit(Instruction("marker"))
        self.release_markers.append((m, failed))

    def children_list(self) -> Field:
        """The frame's list of (free function, frame) of callees that returned."""
        if self.children is None:
            self.children = self.new_field(T.ArrayType(24, T.i8))
            b = self.init_builder
            b.call("llvm.memset.p0.i64", T.void, [self.frame.address(b, self.children),
                                                 ConstInt(T.i8, 0), ConstInt(T.i64, 24),
                                                 ConstInt(T.i1, 0)])
        return self.children

    def release_children(self, b, failed: bool) -> None:
        if self.children is not None:
            name = "enzpy.free_children" if failed else "enzpy.drop_children"
            ensure(self.gradient.module, name)
            b.call(name, T.void, [self.frame.address(b, self.children)])

    def persistent_fields(self) -> list:
        """What a workspace parks: the pointers first (enzpy.free_workspace frees those)."""
        fields = [f for lp, f in self.capacity.items() if not self.fixed_capacity(lp)] + \
            [e.storage for e in self.heap_entries()] + self.buffers
        return [f for f in fields if f.type == T.ptr] + [f for f in fields if f.type != T.ptr]

    def finalize(self, keep: str | None) -> None:
        """Replace the release markers: free everything, or (keep = a workspace global's name)
        park the tape arrays there for the next call, and take them back at frame setup."""
        fields = self.persistent_fields()
        park = bool(keep and fields)
        if park:
            buf, ws_field = self._take_back(keep, fields)
        for m, failed in self.release_markers:
            def release(b, failed=failed):
                self.release_children(b, failed)
                self.free_allocations(b)
                release_all(self.gradient, b)
                for f in self.on_release:
                    f(b, failed)
                if park:
                    self._park(b, keep, fields, buf, ws_field)
                elif not self.kept_in_frame:
                    for e in self.heap_entries():
                        heap.free(b, self.load(b, e.storage))
                    for f in self.buffers:
                        if f.type == T.ptr:
                            heap.free(b, self.load(b, f))
            self.gradient.keep_alive.append(splice(self.gradient.module, m, release, "release"))

    def free_allocations(self, b) -> None:
        """Free the shadow allocations this call made."""
        if self.allocations is not None:
            ensure(self.gradient.module, "enzpy.free_allocations")
            b.call("enzpy.free_allocations", T.void, [self.frame.address(b, self.allocations)])

    def _take_back(self, keep, fields):
        """Frame setup: take the parked arrays and capacities, if a previous call left some."""
        ensure(self.gradient.module, "enzpy.take")
        buf = self.gradient.alloca_builder.alloca(T.ArrayType(8 * len(fields), T.i8), "parked")
        ws_field = self.new_field(T.ptr)
        b = self.init_builder
        ws = b.call("enzpy.take", T.ptr, [Global(T.ptr, keep), buf, ConstInt(T.i64, len(fields))])
        self.store(b, ws, ws_field)
        for k, f in enumerate(fields):
            self.store(b, b.load(f.type, b.gep(T.i64, buf, [ConstInt(T.i64, k)])), f)
        return buf, ws_field

    def _park(self, b, keep, fields, buf, ws_field) -> None:
        ensure(self.gradient.module, "enzpy.park")
        for k, f in enumerate(fields):
            b.store(self.load(b, f), b.gep(T.i64, buf, [ConstInt(T.i64, k)]))
        pointers = sum(1 for f in fields if f.type == T.ptr)
        b.call("enzpy.park", T.void, [Global(T.ptr, keep), self.load(b, ws_field), buf,
                                      ConstInt(T.i64, len(fields)), ConstInt(T.i64, pointers)])

    def release_function(self, keep: str, name: str) -> None:
        """`void name()`: free the arrays parked in workspace `keep` (a later call starts afresh)."""
        fields = self.persistent_fields()
        module = self.gradient.module
        ensure(module, "enzpy.release")
        f = Function(name, T.void, [], prefix="define")
        f.generated = True
        blk = Block("entry", f)
        f.blocks = [blk]
        b = MathBuilder(module, blk)
        pointers = sum(1 for fl in fields if fl.type == T.ptr)
        b.call("enzpy.release", T.void, [Global(T.ptr, keep), ConstInt(T.i64, len(fields)),
                                         ConstInt(T.i64, pointers)])
        b.ret()
        module.add_function(f)

    def bytes_per_iteration(self, loop) -> int:
        return sum(T.size_of(e.type) for e in self.loop_entries(loop))
