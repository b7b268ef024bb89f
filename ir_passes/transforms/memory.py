"""Adjoints of memory instructions.

- `v = load p`: shadow(p) += adj(v).
- `store v, p` into shadowed memory: adj(v) += shadow(p); shadow(p) = 0. The shadow of an
  overwritten location is consumed, so it leaves holding the derivative w.r.t. the value before.
- `memset p`: the shadow of what it overwrote is zeroed.
- `memcpy dst, src`: shadow(src) += shadow(dst); shadow(dst) = 0, element by element.
"""
from __future__ import annotations

from ..analysis.types import kind
from ..ir import types as T
from ..ir.values import ConstFloat, ConstInt
from . import deferred


def reverse_load(g, inst, block, b) -> None:
    if not g.act.is_active(inst):
        return
    d = g.take_adjoint(b, inst)
    slot = deferred.slot_for(g, inst, block)
    if slot is not None:
        b.store(b.accumulate(b.load(inst.type, slot), d), slot)
        return
    sp = g.avail.shadow(inst.ops[0], block, b)
    b.store(b.accumulate(b.load(inst.type, sp, align=inst.align), d), sp, align=inst.align)


def reverse_store(g, inst, block, b) -> None:
    from .restore import marker
    marker(g, inst, b)
    v, p = inst.ops
    if not g.act.has_shadow(p) or kind(v.type) != "float":
        return
    sp = g.avail.shadow(p, block, b)
    if g.act.is_active(v):
        d = b.load(v.type, sp, align=inst.align)
        b.store(ConstFloat(v.type, 0.0), sp, align=inst.align)
        g.add_adjoint(b, v, d)
    else:
        b.store(ConstFloat(v.type, 0.0), sp, align=inst.align)


def reverse_memory_intrinsic(g, inst, block, b) -> None:
    name = inst.callee_name
    dst = inst.ops[0]
    if not g.act.has_shadow(dst):
        if not name.startswith("llvm.memset") and g.act.has_shadow(inst.ops[1]):
            raise g.unsupported("differentiable memory is copied into constant memory", inst,
                                "Pass the destination as Duplicated(array, shadow).")
        return
    size = g.avail.primal(inst.ops[2], block, b)
    sdst = g.avail.shadow(dst, block, b)
    if name.startswith("llvm.memset") or not g.act.has_shadow(inst.ops[1]):
        b.call(f"llvm.memset.p0.{size.type}", T.void, [sdst, ConstInt(T.i8, 0), size, ConstInt(T.i1, 0)])
        return
    ft = g.types.float_type_behind(dst) or g.types.float_type_behind(inst.ops[1])
    if ft is None:
        raise g.unsupported("memory copy of data whose float type is unknown", inst)
    ssrc = g.avail.shadow(inst.ops[1], block, b)
    from .runtime import ensure
    helper = f"enzpy.copy_adjoint.{ft.suffix}"
    ensure(g.module, helper)
    b.call(helper, T.void, [sdst, ssrc, size])
