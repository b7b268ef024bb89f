"""Allocation lifetimes in forward mode.

The shadow of memory a function allocates is allocated alongside it and lives exactly as long:
- an allocator that returns the data pointer (`malloc`): the shadow is a second call with the same
  arguments, zeroed; a free of a pointer with a shadow frees the shadow too;
- an allocator that returns a handle whose data an accessor returns (Numba's meminfos): the shadow
  handle is a second allocation; calls of inactive functions on the handle (reference counting)
  are repeated on the shadow handle, so it is released when the primal's is;
- an allocator of zeroed memory (`calloc`): the shadow is a second call with the same arguments;
- a reallocator (`realloc(old, n)`) reallocates the shadow of `old` alongside: the contents are
  copied, and the new tail (which the primal has not written either) is left as realloc leaves it.

Frees are registered data, like allocators (rules/allocators.py): `register_free(name, arg)`.
"""
from __future__ import annotations

from ..rules.allocators import ALLOCATORS, allocation_size

FREES: dict[str, int] = {"free": 0}            # function -> index of its pointer argument
REALLOCS: dict[str, tuple[int, int]] = {"realloc": (0, 1)}   # function -> (pointer arg, size arg)
ZEROED: set[str] = {"calloc"}   # allocators whose memory comes zeroed (LLVM turns malloc+memset into calloc)


def register_free(name: str, arg: int = 0) -> None:
    FREES[name] = arg


def register_realloc(name: str, ptr_arg: int = 0, size_arg: int = 1) -> None:
    REALLOCS[name] = (ptr_arg, size_arg)


def realloc_operand(inst):
    """The old pointer of a reallocation, or None when inst is not one."""
    if inst.opcode != "call":
        return None
    r = REALLOCS.get(inst.callee_name)
    return inst.ops[r[0]] if r is not None and len(inst.ops) > r[0] else None


def is_allocation(inst) -> bool:
    return allocation_size(inst) is not None or realloc_operand(inst) is not None or is_zeroed(inst)


def is_zeroed(inst) -> bool:
    return inst.opcode == "call" and inst.callee_name in ZEROED


def handle_allocator(inst):
    """For the data accessor of a handle allocator (`data(h)` with `h = alloc(...)`): h; else None."""
    if inst.opcode != "call" or not inst.ops:
        return None
    name = inst.callee_name
    for a in ALLOCATORS.values():
        if a.data == name:
            h = inst.ops[0]
            if getattr(h, "opcode", None) == "call" and h.callee_name == a.alloc:
                return h
    return None


def is_free(inst) -> bool:
    return inst.opcode == "call" and inst.callee_name in FREES


def shadow_handles(fn, act) -> dict:
    """Allocation handles whose data has a shadow, and the phis/selects/casts of them:
    {id(value): accessor name} (the accessor of a derived value is that of its sources)."""
    out: dict = {}
    insts = list(fn.instructions())
    for i in insts:
        if act.has_shadow(i):
            h = handle_allocator(i)
            if h is not None:
                out[id(h)] = i.callee_name
    changed = True
    while changed:
        changed = False
        for i in insts:
            if id(i) in out or not i.type.is_ptr:
                continue
            if i.opcode == "phi":
                srcs = i.ops
            elif i.opcode == "select":
                srcs = i.ops[1:]
            elif i.opcode in ("bitcast", "addrspacecast"):
                srcs = i.ops[:1]
            else:
                continue
            hit = [out[id(s)] for s in srcs if id(s) in out]
            if hit:
                out[id(i)] = hit[0]
                changed = True
    return out
