"""Calls in forward mode.

- memset / memcpy / memmove: memory.py; allocations, frees and reallocations: allocations.py;
- inactive functions (`rule.inactive`): copied; given an allocation handle with a shadow, called
  again on the shadow handle (reference counts move together);
- math functions of the rule table: the tangent from their partials;
- functions of the module taking varying values or shadowed memory: a forward version of the
  callee for this call's activity, `F.fwd.<n>(args, shadows, tangents)`, made once per
  (F, activity, width) by a worklist (recursion calls the version being made). A float result
  comes back as `{T, T x width}`;
- BLAS-style calls (rules/blas.py): their record's tangent (a dot's is dot(n, x', y) +
  dot(n, x, y'));
- anything else touching differentiable data is refused.
"""
from __future__ import annotations

from ...analysis.activity import differentiated
from ...analysis.types import kind
from ...ir import types as T
from ...ir.instructions import Instruction
from ...ir.values import Global
from ...options import Activity
from ...rules.blas import lookup_blas
from ...rules.effects import (FREES, constructor_out, copy_in_operands, copy_out_operands,
                              getter_object,
                              realloc_operand, refusal, call_hint, setup_object)
from ...rules.registry import lookup
from ...analysis.activity import call_activity
from . import allocations, memory
from .tangents import apply_rule, check_scalar

DERIVED = "forward"   # this transform's key in module.derived and module.pending


def visit_call(fm, inst) -> None:
    name = inst.callee_name
    if differentiated(fm.act, inst):
        module_call(fm, inst)
        return
    if name.startswith(("llvm.memset", "llvm.memcpy", "llvm.memmove")):
        memory.memory_intrinsic(fm, inst)
        return
    blas = lookup_blas(name)
    if blas is not None:
        blas.tangent(fm, inst)
        return
    rule = lookup(name) if name else None
    if rule is not None and rule.lanes is not None:   # a warp shuffle (rules/nvptx.py)
        rule.lanes.tangent(fm, inst)
        return
    if id(inst) in fm.handles:
        allocations.handle(fm, inst)
        return
    if getter_object(inst) is not None and fm.has_shadow(inst):
        memory.pointer_getter(fm, inst)
        return
    if constructor_out(inst) is not None and fm.has_shadow(constructor_out(inst)) or \
            copy_in_operands(inst) is not None and fm.has_shadow(copy_in_operands(inst)[0]) or \
            copy_out_operands(inst) is not None and fm.has_shadow(copy_out_operands(inst)[0]):
        memory.container_call(fm, inst)
        return
    if fm.has_shadow(inst) or (realloc_operand(inst) is not None and fm.has_shadow(realloc_operand(inst))):
        allocations.allocation(fm, inst)
        return
    if setup_object(inst) is not None and fm.has_shadow(setup_object(inst)):
        memory.setup_call(fm, inst)
        return
    rule = lookup(name) if name else None
    if name in FREES or (rule is not None and rule.inactive):
        allocations.mirror_release(fm, inst)
        return
    touches_shadow = any(o.type.is_ptr and fm.has_shadow(o) for o in inst.ops)
    varying_args = [o for o in inst.ops if fm.varying(o)]
    if rule is not None and not touches_shadow and not any(fm.varying(o) and not o.type.is_float
                                                           for o in inst.ops):
        fm.emit_primal(inst)
        if fm.varying(inst) and kind(inst.type) == "float":
            check_scalar(fm, inst)
            apply_rule(fm, rule, inst)
        return
    fm.emit_primal(inst)
    what = f"call to external function `{name}`" if name else "indirect call through a function pointer"
    if touches_shadow:
        raise fm.unsupported(f"{what} with differentiable memory{refusal(name or '')}", inst,
                             call_hint(name or ""))
    if varying_args:
        raise fm.unsupported(f"{what} has no derivative rule", inst, "Register a derivative for it.")


def check_arguments(fm, inst) -> None:
    """Refuse a call into the module that passes differentiable data other than float scalars
    and pointers with shadows."""
    for o in inst.ops:
        if o.type.is_ptr and fm.has_shadow(o):
            continue
        if kind(o.type) == "float" and fm.varying(o):
            if not o.type.is_float:
                raise fm.unsupported(f"a call passes {o.type} differentiable data", inst)
        elif fm.varying(o):
            raise fm.unsupported("a call passes differentiable data that is not a float", inst)


def forward_name(fm, callee: str, act: tuple) -> str:
    """The forward version of `callee` for this activity and width, queued for generation."""
    registry = fm.module.derived.setdefault(DERIVED, {})
    key = (callee, act, fm.width)
    if key not in registry:
        registry[key] = f"{callee}.fwd.{len(registry)}"
        fm.module.pending.setdefault(DERIVED, []).append((callee, act, registry[key], fm.width))
    return registry[key]


def module_call(fm, inst) -> None:
    check_arguments(fm, inst)
    act = call_activity(fm.act, inst, scalar_floats=True, scalar_pointers=True)
    callee = fm.module.functions[inst.callee_name]
    name = forward_name(fm, inst.callee_name, act)
    args = [fm.val(o) for o in inst.ops]
    for o, a in zip(inst.ops, act):
        if a is Activity.DUP:
            args += fm.shadow(o, inst)
    for o, a in zip(inst.ops, act):
        if a is Activity.ACTIVE:
            args += fm.tan(o)
    rt = callee.ret_type
    if rt.is_ptr and fm.has_shadow(inst):
        raise fm.unsupported("a function returns a pointer into differentiable memory", inst)
    float_ret = rt.is_float
    out_t = T.StructType([rt] * (1 + fm.width)) if float_ret else rt
    b = fm.b
    c = b.emit(Instruction("call", out_t, args, name=(inst.name + ".fwd") if float_ret and inst.name
                           else inst.name, callee=Global(T.ptr, name), arg_attrs=["" for _ in args]))
    if not float_ret:
        fm.vmap[id(inst)] = c
        return
    fm.vmap[id(inst)] = b.emit(Instruction("extractvalue", rt, [c], name=inst.name, indices=[0]))
    fm.tmap[id(inst)] = [b.emit(Instruction("extractvalue", rt, [c], name=fm.suffix(inst, "t", j),
                                            indices=[1 + j])) for j in range(fm.width)]
