"""Adjoints of memory instructions.

- `v = load p`: shadow(p) += adj(v).
- `store v, p` into shadowed memory: adj(v) += shadow(p); shadow(p) = 0. The shadow of an
  overwritten location is consumed, so it leaves holding the derivative w.r.t. the value before.
- `p += t` (`store (fadd (load p), t), p` in one block, nothing written between): the shadow of
  p passes through unchanged, so the store's adjoint reads it without zeroing it and the load's
  adjoint adds nothing back (the pair would zero it and add the same value again).
- `memset p`: the shadow of what it overwrote is zeroed.
- `memcpy dst, src`: shadow(src) += shadow(dst); shadow(dst) = 0, element by element.
"""
from __future__ import annotations

from ....analysis.types import kind
from ....ir import types as T
from ....ir.instructions import Instruction
from ....ir.values import ConstInt
from ....rules.effects import pure_math
from ....runtime.helpers import ensure
from . import deferred
from ..tape.restore import marker
from .shadow_updates import convert


def reverse_load(g, inst, block, b) -> None:
    if not g.act.is_active(inst):
        return
    d = g.take_adjoint(b, inst, summed=True)
    if _updated_by(g, inst) is not None:
        return
    slot = deferred.slot_for(g, inst, block)
    if slot is not None:
        g.updates.note(inst, g.updates.how(inst.ops[0], inst.type))
        t = g.updates.adjoint_type(inst.type)
        b.store(b.accumulate(b.load(t, slot), convert(b, d, t)), slot)
        return
    sp = g.avail.shadow(inst.ops[0], block, b)
    g.updates.accumulate(b, inst.ops[0], sp, d, inst.align, inst, ty=inst.type)


def reverse_store(g, inst, block, b) -> None:
    marker(g, inst, b)
    v, p = inst.ops
    if not g.act.has_shadow(p) or kind(v.type) != "float":
        return
    sp = g.avail.shadow(p, block, b)
    if g.act.is_active(v):
        d = g.updates.consume(b, p, sp, v.type, inst.align, keep=update_load(g, inst) is not None,
                              inst=inst)
        g.add_adjoint(b, v, d)
    else:
        g.updates.zero(b, p, sp, v.type, inst.align)


def update_load(g, store):
    """For `store (fadd (load p), t), p` (or `load p - t`) in one block, with nothing that may
    write memory between the load and the store and no other use of the load or the sum: the
    load. Else None."""
    v, p = store.ops
    if not (isinstance(v, Instruction) and v.opcode in ("fadd", "fsub") and v.block is store.block
            and len(users(g, v)) == 1 and g.act.is_active(v)):
        return None
    for x in (v.ops if v.opcode == "fadd" else v.ops[:1]):
        if (isinstance(x, Instruction) and x.opcode == "load" and x.ops[0] is p and not x.volatile
                and x.block is store.block and len(users(g, x)) == 1 and g.act.is_active(x)
                and x.type == v.type and _nothing_written_between(x, store)):
            return x
    return None


def _updated_by(g, load):
    """The store of `p += t` whose load is `load`, or None."""
    used = users(g, load)
    if len(used) != 1:
        return None
    after = users(g, used[0])
    if len(after) == 1 and after[0].opcode == "store" and update_load(g, after[0]) is load:
        return after[0]
    return None


def users(g, v) -> list:
    table = g.use_lists
    if table is None:
        table = g.use_lists = {}
        for i in g.primal.instructions():
            for o in i.ops:
                table.setdefault(id(o), []).append(i)
    return table.get(id(v), [])


def _nothing_written_between(first, last) -> bool:
    insts = first.block.instructions
    k, n = insts.index(first), insts.index(last)
    for i in insts[k + 1:n]:
        if i.opcode == "store" or i.opcode == "call" and not pure_math(i) \
                or i.opcode in ("opaque", "atomicrmw", "cmpxchg", "fence"):
            return False
    return True


def reverse_memory_intrinsic(g, inst, block, b) -> None:
    name = inst.callee_name
    dst = inst.ops[0]
    if not g.act.has_shadow(dst):
        if not name.startswith("llvm.memset") and g.act.has_shadow(inst.ops[1]):
            raise g.unsupported("differentiable memory is copied into constant memory", inst,
                                "Pass the destination as Duplicated(array, shadow).")
        return
    for q in (dst, inst.ops[1]):
        if g.updates.wide and g.act.has_shadow(q) and g.updates.memory_type(q, T.f32) != T.f32:
            raise g.unsupported("a memory copy or fill of a float32 array whose adjoints are "
                                "summed in float64", inst, "Differentiate without float64 sums.")
    size = g.avail.primal(inst.ops[2], block, b)
    sdst = g.avail.shadow(dst, block, b)
    if name.startswith("llvm.memset") or not g.act.has_shadow(inst.ops[1]):
        b.call(f"llvm.memset.p0.{size.type}", T.void, [sdst, ConstInt(T.i8, 0), size, ConstInt(T.i1, 0)])
        return
    ft = g.types.float_type_behind(dst) or g.types.float_type_behind(inst.ops[1])
    if ft is None:
        raise g.unsupported("memory copy of data whose float type is unknown", inst)
    ssrc = g.avail.shadow(inst.ops[1], block, b)
    helper = f"enzpy.copy_adjoint.{ft.suffix}"
    ensure(g.module, helper)
    b.call(helper, T.void, [sdst, ssrc, size])
