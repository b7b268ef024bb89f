"""Stand-in shadows for Const array parameters that meet shadowed memory.

`p = x if c else a`, with `x` Const and `a` Duplicated, makes the loads through `p` active: their
adjoints go to the shadow of whichever array `p` points into. `x` has no shadow parameter, so it
gets a zeroed scratch buffer as large as its memory, made when the gradient starts and freed with
its other allocations. Adjoints that land there are dropped, which is what Const means; a value
read through `p` and written back through `p` still carries its derivative through the buffer.

Forward mode does the same (`forward_stand_in`): one zeroed buffer per Const parameter, read as
a zero tangent by every lane, allocated at entry and freed before every return.

Only for parameters whose memory extent is known (enzyme_py's array data pointers) and in a
top-level function; anything else keeps the UnsupportedError.
"""
from __future__ import annotations

from ...ir import types as T
from ...ir.edit import before_terminator, emit_at
from ...ir.values import ConstInt
from ...runtime import heap
from ...runtime.helpers import ensure
from .extent import extent_bounds


def stand_in_shadow(g, p):
    """The stand-in shadow of Const pointer parameter p, or None when it cannot have one."""
    if g.split or p.index not in g.extents:
        return None
    dummies = g.stand_ins
    if p.index in dummies:
        return dummies[p.index]
    b = g.init_builder
    lo, size = extent_bounds(b, g.params, g.extents[p.index])
    buf = _zeroed(b, size)
    ensure(g.module, "enzpy.push_allocation")
    b.call("enzpy.push_allocation", T.void, [g.tape.frame.address(b, g.tape.allocation_list()), buf])
    dummies[p.index] = _shifted(b, buf, lo)
    return dummies[p.index]


def forward_stand_in(fm, p):
    """Forward mode: the stand-in shadow of Const pointer parameter p for every lane, or None."""
    ext = fm.extents.get(p.index)
    if ext is None:
        return None
    if p.index in fm.stand_ins:
        return fm.stand_ins[p.index]
    made = []

    def zeroed(b):
        lo, size = extent_bounds(b, fm.params, ext)
        buf = _zeroed(b, size)
        made.extend([buf, _shifted(b, buf, lo)])
    scratch = emit_at(fm.module, fm.fn.blocks[0], fm.stand_in_count, zeroed, "stand_in")
    fm.stand_in_count += len(scratch.instructions)
    buf, shadow = made
    fm.stand_in_buffers.append(buf)
    fm.stand_ins[p.index] = [shadow] * fm.width
    return fm.stand_ins[p.index]


def free_forward_stand_ins(fm) -> None:
    """Before every return of the forward-mode function: free the stand-in buffers."""
    if not fm.stand_in_buffers:
        return

    def free(b):
        for buf in fm.stand_in_buffers:
            heap.free(b, buf)
    for blk in fm.fn.blocks:
        t = blk.terminator
        if t is None or t.opcode != "ret":
            continue
        before_terminator(fm.module, blk, free, "free_stand_ins")


def _zeroed(b, size):
    """`size` zeroed bytes from the module's heap."""
    b.module.declare(heap.of(b.module).allocate, T.ptr, [T.i64])
    b.module.declare("llvm.memset.p0.i64", T.void, [T.ptr, T.i8, T.i64, T.i1])
    buf = heap.allocate(b, size)
    b.call("llvm.memset.p0.i64", T.void, [buf, ConstInt(T.i8, 0), size, ConstInt(T.i1, 0)])
    return buf


def _shifted(b, buf, lo):
    """The stand-in for the parameter's pointer: the parameter's first byte is at `lo` from it."""
    return b.gep(T.i8, buf, [b.sub(ConstInt(T.i64, 0), lo)])
