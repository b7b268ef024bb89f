"""Derivatives of float atomic updates in the primal (`cuda.atomic.add(out, k, v)`).

`atomicrmw fadd p, v` (or fsub) adds v into *p, whatever other threads add: in reverse mode the
adjoint of v is (minus) the shadow of *p, which passes through unchanged (as for `p += v`,
memory.py); in forward mode the tangent of v is added atomically into the shadow. The old value
the instruction returns must not be used as differentiable data (it depends on the order the
threads ran in).
"""
from __future__ import annotations

from ...analysis.activity import float_atomic_add as float_add
from ...ir.instructions import Instruction


def reverse_atomic(g, inst, block, b) -> bool:
    """The reverse of a float atomic add into shadowed memory; False when inst is not one."""
    op = float_add(inst)
    if op is None or not g.act.has_shadow(inst.ops[0]):
        return False
    if g.act.is_active(inst):
        raise g.unsupported("the old value of an atomic add is used as differentiable data", inst)
    if not g.act.is_active(inst.ops[1]):
        return True
    sp = g.avail.shadow(inst.ops[0], block, b)
    d = g.updates.read(b, inst.ops[0], sp, inst.ops[1].type)
    g.add_adjoint(b, inst.ops[1], b.fneg(d) if op == "fsub" else d)
    return True


def forward_atomic(fm, inst) -> bool:
    """The tangent of a float atomic add into shadowed memory; False when inst is not one."""
    op = float_add(inst)
    if op is None or not fm.has_shadow(inst.ops[0]):
        return False
    fm.emit_primal(inst)
    if fm.varying(inst):
        raise fm.unsupported("the old value of an atomic add is used as differentiable data", inst)
    tangents = fm.tan(inst.ops[1])
    if tangents:
        for sp, t in zip(fm.shadow(inst.ops[0], inst), tangents):
            atomic(fm.b, op, sp, t, None)
    return True


def atomic(b, op, p, v, align):
    """`atomicrmw <op> ptr p, T v monotonic`: the old value."""
    a = f", align {align}" if align else ""
    return b.emit(Instruction("opaque", v.type, [p, v], flags=["atomicrmw"],
                              raw=f"atomicrmw {op} ptr {{0}}, {v.type} {{1}} monotonic{a}"))
