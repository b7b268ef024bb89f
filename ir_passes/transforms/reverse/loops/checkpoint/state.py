"""A time loop's state as bytes: the memory of the arrays its body writes, then its carry.

`N.bytes(params)` is the size of one snapshot, `N.save(params, dst)` copies the state into a
snapshot and `N.load(params, src)` copies it back; `N.view(params, snap, out)` gives the
pointers that make a step run on a snapshot's memory in place (TimeLoop.in_place). The arrays
are copied whole, from their extent (common/extent.py), so a snapshot is right whatever part of
them a step writes.
"""
from __future__ import annotations

from .....ir import types as T
from .....ir.builder import MathBuilder
from .....ir.module import Block, Function
from .....ir.values import Argument, ConstInt
from ....common.extent import Extent, extent_bounds

MEMCPY = "llvm.memcpy.p0.p0.i64"


def add_state_functions(module, tl, param_types) -> None:
    """Define tl.name + .bytes / .save / .load over parameters of `param_types`."""
    f, b, params = _function(module, tl.name + ".bytes", T.i64, param_types, [])
    b.ret(snapshot_bytes(b, params, tl))
    for which in ("save", "load"):
        f, b, params = _function(module, f"{tl.name}.{which}", T.void, param_types, [T.ptr])
        snap = params[-1]
        offset = ConstInt(T.i64, 0)
        for k, ext in tl.regions:
            lo, size = _bounds(b, params, ext)
            _copy(b, which, b.gep(T.i8, params[k], [lo]), b.gep(T.i8, snap, [offset]), size)
            offset = b.add(offset, size)
        _copy(b, which, params[tl.nparams - 1], b.gep(T.i8, snap, [offset]),
              ConstInt(T.i64, tl.carry_bytes))
        b.ret()
    if tl.in_place:
        _add_view(module, tl, param_types)


def _add_view(module, tl, param_types) -> None:
    """N.view(params, snap, out): out[j] = where region j's pointer would be if its memory were
    the snapshot's, then the carry's, so that a step can run on the snapshot in place."""
    f, b, params = _function(module, f"{tl.name}.view", T.void, param_types, [T.ptr, T.ptr])
    snap, out = params[-2], params[-1]
    offset = ConstInt(T.i64, 0)
    for j, (k, ext) in enumerate(tl.regions):
        lo, size = _bounds(b, params, ext)
        at = b.gep(T.i8, snap, [b.sub(offset, lo)])
        b.store(at, b.gep(T.ptr, out, [ConstInt(T.i64, j)]))
        offset = b.add(offset, size)
    b.store(b.gep(T.i8, snap, [offset]), b.gep(T.ptr, out, [ConstInt(T.i64, len(tl.regions))]))
    b.ret()


def snapshot_bytes(b, params, tl):
    """The bytes of one snapshot of `tl`, built with b over the step's parameters `params`."""
    total = ConstInt(T.i64, tl.carry_bytes)
    for k, ext in tl.regions:
        total = b.add(total, _bounds(b, params, ext)[1])
    return total


def _bounds(b, params, ext):
    """(first byte's offset, bytes) of a region: an Extent, or the parameter holding a size (or
    the size, a constant)."""
    if isinstance(ext, Extent):
        return extent_bounds(b, params, ext)
    size = params[ext] if isinstance(ext, int) else ext
    if size.type != T.i64:
        size = b.cast("zext", size, T.i64)
    return ConstInt(T.i64, 0), size


def _copy(b, which, memory, snapshot, size) -> None:
    dst, src = (snapshot, memory) if which == "save" else (memory, snapshot)
    b.call(MEMCPY, T.void, [dst, src, size, ConstInt(T.i1, 0)])


def _function(module, name, ret, param_types, extra):
    params = [Argument(t, f"p{k}", "", k) for k, t in enumerate(list(param_types) + extra)]
    f = Function(name, ret, params, prefix="define internal")
    f.generated = True
    blk = Block("entry", f)
    f.blocks = [blk]
    module.add_function(f)
    return f, MathBuilder(module, blk), params
