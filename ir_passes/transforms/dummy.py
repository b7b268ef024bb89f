"""Stand-in shadows for Const array parameters that meet shadowed memory.

`p = x if c else a`, with `x` Const and `a` Duplicated, makes the loads through `p` active: their
adjoints go to the shadow of whichever array `p` points into. `x` has no shadow parameter, so it
gets a zeroed scratch buffer as large as its memory, made when the gradient starts and freed with
its other allocations. Adjoints that land there are dropped, which is what Const means; a value
read through `p` and written back through `p` still carries its derivative through the buffer.

Only for parameters whose memory extent is known (enzyme_py's array data pointers) and in a
top-level gradient; anything else keeps the UnsupportedError.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.values import ConstInt
from . import heap
from .restore import bounds


def stand_in_shadow(g, p):
    """The stand-in shadow of Const pointer parameter p, or None when it cannot have one."""
    if g.split or p.index not in g.extents:
        return None
    dummies = g.__dict__.setdefault("stand_ins", {})
    if p.index in dummies:
        return dummies[p.index]
    from .runtime import ensure
    b = g.init_builder
    lo, size = bounds(g, b, p)
    g.module.declare(heap.of(g.module).allocate, T.ptr, [T.i64])
    g.module.declare("llvm.memset.p0.i64", T.void, [T.ptr, T.i8, T.i64, T.i1])
    buf = heap.allocate(b, size)
    b.call("llvm.memset.p0.i64", T.void, [buf, ConstInt(T.i8, 0), size, ConstInt(T.i1, 0)])
    ensure(g.module, "enzpy.push_allocation")
    b.call("enzpy.push_allocation", T.void, [g.tape.frame.address(b, g.tape.allocation_list()), buf])
    shadow = b.gep(T.i8, buf, [b.sub(ConstInt(T.i64, 0), lo)])
    dummies[p.index] = shadow
    return shadow
