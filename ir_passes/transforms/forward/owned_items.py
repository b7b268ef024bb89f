"""Shadows of memory whose element destructor releases its items (a list of arrays: the destructor of
its payload drops the reference it holds on each item) in forward mode.

The shadow handle gets the primal's element destructor (allocations.handle), so the items' shadows
are released exactly when the primal's items are. For that the shadow holds
- the primal's integers (the item count the destructor reads), where the allocation holds no
  floats (there an integer may carry a float's bits, whose tangent memory.store writes instead);
- for each item handle, a reference of its own: the item's shadow handle, whose retain/release
  calls are repeated with the primal's (allocations.mirror_release), or null where the item is
  its own shadow (a parameter's handle, which has no shadow: the shadow side takes no reference
  on it and the caller owns it). A handle that may be its own shadow is compared at run time.

A handle is a pointer the function gives to a registered retain/release function, a handle
allocator's call, or a phi/select of them (rules/effects.py).
"""
from __future__ import annotations

from ...analysis.types import roots
from ...ir import types as T
from ...ir.values import Constant, Global
from ...rules.effects import element_dtor_arg, handle_of, is_handle, is_reference_count


def destructed_memory(fn, types) -> dict:
    """{id(call): holds no floats} for the calls yielding the data of a handle allocation with an
    element destructor (accessors, reallocations)."""
    groups: dict = {}
    for i in fn.instructions():
        h = handle_of(i) if i.opcode == "call" else None
        if h is not None and element_dtor_arg(h) is not None:
            groups.setdefault(id(h), []).append(i)
    out = {}
    for calls in groups.values():
        floats = any(t.is_float for c in calls for t in types.memory_types(c))
        out.update((id(c), not floats) for c in calls)
    return out


def counted_handles(fn) -> set:
    """ids of the pointers the function treats as allocation handles."""
    out, merges = set(), []
    for i in fn.instructions():
        if i.opcode == "call" and is_handle(i):
            out.add(id(i))
        elif i.opcode == "call" and is_reference_count(i.callee_name):
            out.update(id(o) for o in i.ops if o.type.is_ptr and not isinstance(o, (Constant, Global)))
        elif i.opcode in ("phi", "select") and i.type.is_ptr:
            merges.append(i)
    changed = True
    while changed:   # a merge of handles is one, and so is what it merges
        changed = False
        for m in merges:
            ops = [o for o in (m.ops if m.opcode == "phi" else m.ops[1:])
                   if not isinstance(o, (Constant, Global))]
            if id(m) in out or any(id(o) in out for o in ops):
                new = {id(m)} | {id(o) for o in ops}
                if not new <= out:
                    out |= new
                    changed = True
    return out


def in_destructed(fm, p, no_floats=False) -> bool:
    """Does p point into memory an element destructor reads (and that holds no floats)?"""
    rs = roots(p)
    return bool(rs) and all(fm.destructed.get(id(r), False) if no_floats else id(r) in fm.destructed
                            for r in rs)


def item_shadows(fm, v, lanes) -> list:
    """The shadows stored for handle v into memory whose destructor releases them: null where v
    is its own shadow."""
    if id(v) not in fm.counted or is_handle(v):   # an allocation's: its own shadow handles
        return lanes
    b, pv, null = fm.b, fm.val(v), Constant(T.ptr, "null")
    return [null if s is pv else b.select(b.icmp("eq", s, pv), null, s) for s in lanes]


__all__ = ["counted_handles", "destructed_memory", "in_destructed", "item_shadows"]
