"""The tangent of one instruction: dispatch by opcode; arithmetic goes through the rule table.

Every instruction is first copied into the new function (`fm.emit_primal`), then its tangents are
built right after it. An instruction with varying inputs and no rule is refused: a derivative is
never silently zero.
"""
from __future__ import annotations

from ...analysis.types import kind
from ...ir import types as T
from ...ir.instructions import Instruction
from ...ir.values import Constant, ConstFloat, ConstInt
from ...rules.registry import lookup
from ..common.atomics import forward_atomic
from . import calls, memory, parallel
from .tangents import apply_rule, check_scalar

RULE_OPCODES = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "freeze"}
# no tangent flows out of these, whatever flows in
SINKS = {"fcmp", "icmp", "fptosi", "fptoui", "ptrtoint", "br", "switch", "ret", "unreachable"}


def visit(fm, inst) -> None:
    handler = HANDLERS.get(inst.opcode)
    if handler is not None:
        handler(fm, inst)
    elif inst.opcode in RULE_OPCODES:
        arithmetic(fm, inst)
    else:
        generic(fm, inst)


def visit_phi(fm, phi) -> None:
    """Copy a phi and make its tangent / shadow phis; incoming values are filled in at the end."""
    b, w = fm.b, fm.width

    def new_phi(t, name, what, j):
        p = b.emit(Instruction("phi", t, [], name=name))
        fm.phis.append((p, phi, what, j))
        return p

    fm.vmap[id(phi)] = new_phi(phi.type, phi.name, "value", 0)
    if fm.varying(phi) and kind(phi.type) == "float":
        check_scalar(fm, phi)
        fm.tmap[id(phi)] = [new_phi(phi.type, fm.suffix(phi, "t", j), "tangent", j) for j in range(w)]
    elif fm.varying(phi) and kind(phi.type) == "int":
        fm.rmap[id(phi)] = [new_phi(phi.type, fm.suffix(phi, "raw", j), "raw", j) for j in range(w)]
    elif fm.varying(phi):
        raise fm.unsupported(f"a phi of type {phi.type} carries differentiable data", phi)
    if fm.has_shadow(phi):
        fm.smap[id(phi)] = [new_phi(T.ptr, fm.suffix(phi, "shadow", j), "shadow", j) for j in range(w)]
    if id(phi) in fm.handles:
        fm.hmap[id(phi)] = [new_phi(T.ptr, fm.suffix(phi, "handle", j), "handle", j) for j in range(w)]


def arithmetic(fm, inst) -> None:
    fm.emit_primal(inst)
    if not fm.varying(inst):
        return
    check_scalar(fm, inst)
    rule = lookup(inst.opcode)
    if rule is None:
        raise fm.unsupported(f"no derivative rule for `{inst.opcode}`", inst)
    apply_rule(fm, rule, inst)


def float_cast(fm, inst) -> None:
    """fpext / fptrunc: the tangent is cast the same way (the rule table holds the transpose)."""
    c = fm.emit_primal(inst)
    t = fm.tan(inst.ops[0])
    if t is None or not fm.varying(inst):
        fm.tmap[id(inst)] = None      # zero: a varying operand whose tangent is zero (round)
        return
    check_scalar(fm, inst)
    fm.tmap[id(inst)] = [fm.b.cast(inst.opcode, v, c.type, fm.suffix(inst, "t", j)) for j, v in enumerate(t)]


def select(fm, inst) -> None:
    """The tangent of a select is the tangent of the operand it picks."""
    c = fm.emit_primal(inst)
    b, w = fm.b, fm.width
    cond = c.ops[0]
    if fm.tan(inst.ops[0]) is not None or fm.varying(inst.ops[0]):
        raise fm.unsupported("a select's condition is differentiable data", inst.ops[0])
    if fm.varying(inst) and kind(inst.type) == "float":
        check_scalar(fm, inst)
        ta, tb = fm.tan(inst.ops[1]), fm.tan(inst.ops[2])
        z = fm.zero(inst.type)
        guard = zero_guard(fm, inst) if fm.strong_zero_guards else None
        if guard is not None:
            fm.tmap[id(inst)] = guarded_tangents(fm, inst, *guard)
            return
        fm.tmap[id(inst)] = [b.select(cond, ta[j] if ta else z, tb[j] if tb else z,
                                      fm.suffix(inst, "t", j)) for j in range(w)]
    elif fm.varying(inst) and kind(inst.type) == "int":
        ra, rb = fm.rmap.get(id(inst.ops[1])), fm.rmap.get(id(inst.ops[2]))
        z = ConstInt(inst.type, 0)
        fm.rmap[id(inst)] = [b.select(cond, ra[j] if ra else z, rb[j] if rb else z) for j in range(w)]
    elif fm.varying(inst):
        raise fm.unsupported(f"a select of type {inst.type} carries differentiable data", inst)
    if fm.has_shadow(inst):
        sa, sb = fm.shadow(inst.ops[1], inst), fm.shadow(inst.ops[2], inst)
        fm.smap[id(inst)] = [b.select(cond, sa[j], sb[j], fm.suffix(inst, "shadow", j)) for j in range(w)]
    if id(inst) in fm.handles:
        null = Constant(T.ptr, "null")
        ha, hb = fm.handle_lanes(inst.ops[1], inst), fm.handle_lanes(inst.ops[2], inst)
        fm.hmap[id(inst)] = [b.select(cond, ha[j] if ha else null, hb[j] if hb else null) for j in range(w)]


def zero_guard(fm, inst):
    """Reverse mode's strong-zero guard `select (d != 0 or F), c, 0` (rules/partials.py) with a
    varying d and c: (d, c, F); else None. F is `c is not NaN` or a test of primal values."""
    cond, c, zero_arm = inst.ops
    if not (isinstance(zero_arm, ConstFloat) and zero_arm.value == 0.0) or fm.tan(c) is None:
        return None
    parts = either(cond)
    if parts is None:
        return None
    for t, rest in (parts, parts[::-1]):
        if getattr(t, "opcode", None) == "fcmp" and t.pred == "une":
            zeros = [o for o in t.ops if isinstance(o, ConstFloat) and o.value == 0.0]
            ds = [o for o in t.ops if not isinstance(o, ConstFloat)]
            if len(zeros) == 1 and len(ds) == 1 and fm.tan(ds[0]) is not None:
                return ds[0], c, rest
    return None


def either(cond):
    """(a, b) for `or a, b` or its logical form `select a, true, b`; else None."""
    op = getattr(cond, "opcode", None)
    if op == "or":
        return tuple(cond.ops)
    if op == "select" and isinstance(cond.ops[1], ConstInt) and cond.ops[1].value == 1:
        return cond.ops[0], cond.ops[2]
    return None


def is_nan_test(t, c) -> bool:
    """Is `t` the test `c is not NaN` (`fcmp ord c, c`, or `ord c, 0.0` as LLVM writes it)?"""
    if getattr(t, "opcode", None) != "fcmp" or t.pred != "ord":
        return False
    a, b = t.ops if t.ops[0] is c else t.ops[::-1]
    return a is c and (b is c or isinstance(b, ConstFloat) and b.value == b.value)


def guarded_tangents(fm, inst, d, c, number) -> list:
    """The strong-zero guard, differentiated lane by lane (strong_zero_guards): the guard is
    linear in (d, c) where c is a number, so lane j is the same guard on (d'_j, c'_j), with
    `c is not NaN` read on c'_j (a test of primal values is the same in every lane). Batched
    reverse mode runs the gradient with zero seeds (every adjoint d is 0) and its lanes are the
    adjoints: lane j is what a call with seed j gives."""
    b = fm.b
    zero = fm.zero(inst.type)
    lanes = []
    for td, tc in zip(fm.tan(d), fm.tan(c)):
        lane_number = b.fcmp("ord", tc, tc) if is_nan_test(number, c) else fm.val(number)
        keep = b.binop("or", b.fcmp("une", td, zero), lane_number)
        lanes.append(b.select(keep, tc, zero))
    return lanes


def bitcast(fm, inst) -> None:
    """Pointer casts cast the shadows; a float reinterpreted as an integer carries its tangent's
    bits (so a copy through integers copies the tangent), and back."""
    if inst.type.is_ptr:
        memory.pointer_op(fm, inst)
        return
    fm.emit_primal(inst)
    src = inst.ops[0]
    t = fm.tan(src) if kind(src.type) == "float" else fm.rmap.get(id(src))
    if t is None:
        if fm.varying(inst):
            raise fm.unsupported("a bitcast of differentiable data", inst)
        return
    if not (isinstance(inst.type, (T.FloatType, T.IntType)) and
            isinstance(src.type, (T.FloatType, T.IntType))):
        raise fm.unsupported(f"a bitcast of differentiable data to {inst.type}", inst)
    lanes = [fm.b.cast("bitcast", v, inst.type) for v in t]
    if kind(inst.type) == "float":
        fm.tmap[id(inst)] = lanes
    else:
        fm.rmap[id(inst)] = lanes


def call(fm, inst) -> None:
    if parallel.launches(fm, inst):
        parallel.launch(fm, inst)
    else:
        calls.visit_call(fm, inst)


def ret(fm, inst) -> None:
    if not fm.float_ret:
        fm.clone(inst, ops=[parallel.status(fm, fm.val(inst.ops[0]))] if inst.ops else None)
        return
    b = fm.b
    v = inst.ops[0]
    t = fm.tan(v)
    agg = Constant(fm.fn.ret_type, "undef")
    parts = [fm.val(v)] + [t[j] if t else fm.zero(v.type) for j in range(fm.width)]
    for k, p in enumerate(parts):
        agg = b.emit(Instruction("insertvalue", fm.fn.ret_type, [agg, p], indices=[k]))
    b.ret(agg)


def generic(fm, inst) -> None:
    """Anything without a tangent rule: copied; refused when differentiable data flows in."""
    if forward_atomic(fm, inst):
        return
    fm.emit_primal(inst)
    if inst.opcode in SINKS:
        return
    what = inst.flags[0] if inst.opcode == "opaque" and inst.flags else inst.opcode
    if fm.varying(inst) or any(fm.varying(o) for o in inst.ops):
        raise fm.unsupported(f"no derivative rule for `{what}`", inst)
    if fm.has_shadow(inst):
        raise fm.unsupported(f"a pointer into differentiable memory comes from `{what}`", inst)
    if inst.opcode in ("opaque", "extractvalue", "insertvalue") and \
            any(fm.has_shadow(o) for o in inst.ops):
        raise fm.unsupported("atomic instruction" if what in ("atomicrmw", "cmpxchg")
                             else f"`{what}` on differentiable memory", inst)


HANDLERS = {
    "select": select,
    "fpext": float_cast,
    "fptrunc": float_cast,
    "bitcast": bitcast,
    "ret": ret,
    "call": call,
    "load": memory.load,
    "store": memory.store,
    "alloca": memory.alloca,
    "getelementptr": memory.pointer_op,
    "addrspacecast": memory.pointer_op,
}
