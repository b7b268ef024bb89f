"""Allocation lifetimes in forward mode.

The shadow of memory a function allocates is allocated alongside it and lives exactly as long:
- an allocator that returns the data pointer (`malloc`): the shadow is a second call with the same
  arguments, zeroed; a free of a pointer with a shadow frees the shadow too;
- an allocator that returns a handle whose data an accessor returns (a host's reference-counted
  allocations): the shadow handle is a second allocation; calls of inactive functions on the
  handle (reference counting) are repeated on the shadow handle, so it is released when the
  primal's is;
- an allocator of zeroed memory (`calloc`): the shadow is a second call with the same arguments;
- a reallocator (`realloc(old, n)`) reallocates the shadow of `old` alongside: the contents are
  copied, and the new tail (which the primal has not written either) is left as realloc leaves it;
  a reallocator of a handle's data (a list growing) does the same on the shadow handles;
- a handle allocator with an element destructor (a list whose destructor drops its items'
  references) gives the shadow handle the same destructor: the shadow holds its own references
  to the items' shadows (owned_items.py).

Allocators, frees and reallocators are registered data (rules/effects.py).
"""
from __future__ import annotations

from ...analysis.types import roots
from ...ir import types as T
from ...ir.instructions import Instruction
from ...ir.values import Argument, Constant, Global
from ...rules.effects import (FREES, accessed_handles, allocation_size, handle_of,
                              handle_realloc_size, handle_size, is_reference_count, is_zeroed,
                              realloc_operand, writes_nothing)
from .memory import memset_zero


def shadow_handles(fn, act) -> dict:
    """Allocation handles whose data has a shadow, and the phis/selects/casts of them:
    {id(value): accessor name} (the accessor of a derived value is that of its sources)."""
    out: dict = {}
    insts = list(fn.instructions())
    for i in insts:
        if act.has_shadow(i):
            for h in accessed_handles(i):
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


def allocation(fm, inst) -> None:
    """A call returning a pointer with a shadow: an allocation's data pointer or a reallocation."""
    c = fm.emit_primal(inst)
    w = fm.width
    old = realloc_operand(inst)
    if old is not None:
        k = inst.ops.index(old)
        so = fm.shadow(old, inst)
        fm.smap[id(inst)] = [fm.clone(inst, c.ops[:k] + [so[j]] + c.ops[k + 1:], fm.suffix(inst, "shadow", j))
                             for j in range(w)]
        return
    if is_zeroed(inst):
        fm.smap[id(inst)] = [fm.clone(inst, None, fm.suffix(inst, "shadow", j)) for j in range(w)]
        return
    size = allocation_size(inst)
    if size is None:
        raise fm.unsupported(f"differentiable memory comes from a call to `{inst.callee_name}`", inst)
    # the handle: an allocator's call or a phi / select merging such calls (an array allocated
    # in a loop: loop rotation allocates in the preheader and the latch); its shadow handles
    # give the shadow data (the accessor called on the primal handle would give the primal's)
    h = handle_of(inst) if handle_realloc_size(inst) is not None else \
        inst.ops[0] if accessed_handles(inst) else None
    if h is not None:
        handles = fm.hmap[id(h)]
        fm.smap[id(inst)] = [fm.clone(inst, [handles[j]] + c.ops[1:], fm.suffix(inst, "shadow", j))
                             for j in range(w)]
        return
    lanes = [fm.clone(inst, None, fm.suffix(inst, "shadow", j)) for j in range(w)]
    for s in lanes:
        memset_zero(fm, s, fm.val(size))
    fm.smap[id(inst)] = lanes


def handle(fm, inst) -> None:
    """An allocation handle whose data has a shadow: a second allocation per lane, its data zeroed."""
    c = fm.emit_primal(inst)
    accessor = fm.handles[id(inst)]
    size = fm.val(handle_size(inst))
    lanes = []
    for j in range(fm.width):
        hj = fm.clone(inst, list(c.ops), fm.suffix(inst, "handle", j))
        data = fm.b.call(accessor, T.ptr, [hj])
        memset_zero(fm, data, size)
        lanes.append(hj)
    fm.hmap[id(inst)] = lanes


def mirror_release(fm, inst) -> None:
    """A free, or an inactive function (reference counting) given an allocation handle: the same
    call on the shadows, so they are released with the primal."""
    c = fm.emit_primal(inst)
    name = inst.callee_name
    if name.startswith("llvm."):
        return
    positions = [FREES[name]] if name in FREES else range(len(inst.ops))
    # a shadow that is not a handle is passed again only to a free or to a function that writes
    # no memory (reference counting): a call that writes through its pointer arguments
    # (shapes and strides from a reshape) would write the primal's memory from shadow inputs
    repeatable = name in FREES or writes_nothing(name)
    for k in positions:
        o = inst.ops[k]
        if not o.type.is_ptr or isinstance(o, (Constant, Global)):
            continue
        lanes = fm.hmap.get(id(o))
        params = [] if lanes is not None else _parameters(o)
        owning = name in FREES or is_reference_count(name)
        if lanes is None and fm.has_shadow(o) and repeatable and (not params or owning
                                                                   and len(params) < len(roots(o))):
            lanes = fm.shadow(o, inst)
        if lanes is None:
            continue
        b, null = fm.b, Constant(T.ptr, "null")
        # a free or reference count of a pointer that is either a parameter's or the kernel's own
        # (a host's copy made only when source and destination overlap; a list item's handle
        # merged with a parameter's by a sunk decref): the shadow is released only when the
        # pointer is not the parameter (the caller owns that one and its shadow)
        theirs = [b.icmp("eq", c.ops[k], fm.val(a)) for a in params]
        for j in range(fm.width):
            # memory without a shadow is its own shadow (store): never release it twice
            s = b.select(b.icmp("eq", lanes[j], c.ops[k]), null, lanes[j])
            for t in theirs:
                s = b.select(t, null, s)
            b.emit(Instruction("call", c.type, c.ops[:k] + [s] + c.ops[k + 1:],
                               callee=c.callee, arg_attrs=["" for _ in c.ops], fnty_text=c.fnty_text))


def _parameters(p) -> list:
    """The parameters among the objects p may point into (the caller owns their memory; with
    none, p is memory the generated code allocated a shadow for)."""
    return [r for r in roots(p) if isinstance(r, Argument)]
