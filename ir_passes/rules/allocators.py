"""Allocation functions: memory a function allocates gets a shadow of the same size.

An allocator is described as data: the function that allocates (returning a handle, or the data
pointer itself), which argument is the size in bytes, and the accessor that turns the handle into
the data pointer. For an allocation that receives differentiable data the forward sweep mallocs a
zeroed shadow of the same size right after the data pointer is obtained; the reverse sweep frees it
when it walks back past that point. The primal's own frees stay where they are: the reverse sweep
reads primal memory of an allocation only when the allocator has reference counting (`retain`,
`release`) and the gradient holds a reference until the end (transforms/retain.py); otherwise the
values it needs are cached.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Allocator:
    alloc: str                 # allocating function
    size_arg: int              # index of its size-in-bytes argument
    data: str | None = None    # accessor handle -> data pointer; None: alloc returns the data
    retain: str | None = None  # handle -> void: one more reference (a reference count)
    release: str | None = None  # handle -> void: drop one; must accept null


ALLOCATORS: dict[tuple, Allocator] = {}


def register_allocator(alloc: str, size_arg: int = 0, data: str | None = None,
                       retain: str | None = None, release: str | None = None) -> Allocator:
    """`retain`/`release`: reference counting of the handle, when the allocator has it. The
    gradient then keeps memory allocated outside loops alive until its reverse sweep ends, and
    reads it again there instead of taping what it held."""
    a = Allocator(alloc, size_arg, data, retain, release)
    ALLOCATORS[(alloc, data)] = a
    return a


register_allocator("malloc", 0)


def allocation_size(inst):
    """When `inst` yields the data pointer of an allocation: the size operand; else None."""
    if inst.opcode != "call":
        return None
    name = inst.callee_name
    a = ALLOCATORS.get((name, None))
    if a is not None:
        return inst.ops[a.size_arg]
    for a in ALLOCATORS.values():
        if a.data == name and inst.ops:
            handle = inst.ops[0]
            if getattr(handle, "opcode", None) == "call" and handle.callee_name == a.alloc:
                return handle.ops[a.size_arg]
            size = _merged_size(handle, a)
            if size is not None:
                return size
    return None


def _merged_size(handle, a):
    """The size of the allocations a phi or select of handles merges, when they all come from
    allocator `a` with the same size (an `np.empty` reassigned in a loop: LLVM's loop rotation
    allocates in the preheader and in the latch); else None."""
    if getattr(handle, "opcode", None) not in ("phi", "select"):
        return None
    sizes, seen, work = [], set(), [handle]
    while work:
        h = work.pop()
        if id(h) in seen:
            continue
        seen.add(id(h))
        op = getattr(h, "opcode", None)
        if op == "phi":
            work.extend(h.ops)
        elif op == "select":
            work.extend(h.ops[1:])
        elif op == "call" and h.callee_name == a.alloc:
            sizes.append(h.ops[a.size_arg])
        else:
            return None
    first = sizes[0] if sizes else None
    for z in sizes[1:]:
        if z is not first and not (getattr(z, "value", None) is not None
                                   and getattr(z, "value", None) == getattr(first, "value", None)
                                   and str(z.type) == str(first.type)):
            return None
    return first
