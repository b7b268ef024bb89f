"""Calls into functions of the module: differentiated as functions of their own.

A call to F that takes varying values or shadowed memory uses F's split gradient for the
activity pattern seen at the call:
- forward: `F.aug(args, shadows, &frame)` runs F and returns F's own frame (its tape);
- reverse: `F.rev(args, shadows, douts, frame)` runs F's reverse sweep and frees that frame.
The frame pointer is cached like any other value, so calls in loops and recursion (direct or
mutual: F.aug calls F.aug) work. Pairs are generated once per (F, activity) by a worklist.
"""
from __future__ import annotations

from ....ir import types as T
from ....ir.builder import MathBuilder
from ....ir.instructions import Instruction
from ....ir.values import ConstFloat, Global
from ....options import Activity
from ....runtime.helpers import ensure
from ....analysis.activity import call_activity
from ..loops.checkpoint.outline import time_loop
from ..loops.checkpoint.schedule import forward_failure
from ..tape.tape_keys import CallFrame

DERIVED = "reverse"   # this transform's key in module.derived and module.pending


def split_names(g, inst) -> tuple[str, str, tuple]:
    """The (aug, rev) names for this call's callee and activity, queued for generation."""
    act = call_activity(g.act, inst)
    return register_split(g.module, inst.callee_name, act) + (act,)


def register_split(module, callee: str, act: tuple) -> tuple[str, str]:
    """The (aug, rev) names of `callee`'s split gradient for activity `act`, queued for
    generation the first time they are asked for."""
    registry = module.derived.setdefault(DERIVED, {})
    key = (callee, act)
    if key not in registry:
        tag = f"{len(registry)}"
        registry[key] = (f"{callee}.aug.{tag}", f"{callee}.rev.{tag}")
        module.pending.setdefault(DERIVED, []).append((callee, act) + registry[key])
    return registry[key]


def forward_call(fwd, inst, blk):
    """Emit F.aug in place of the primal call; returns the clone list entries."""
    g = fwd.g
    aug, _, act = split_names(g, inst)
    if inst.type.is_float and any(a is not Activity.CONST for a in act):
        # the split gradient's reverse takes no adjoint for a returned value (and activity
        # analysis counts it constant): only results through memory (a host's return pointer)
        # reach the callee's reverse
        raise g.unsupported("a differentiated call of a module function that returns a float: "
                            "return it through memory instead", inst)
    field = g.tape.new_field(T.ptr)
    out_ptr = fwd_field_address(fwd, blk, field)
    shadow_ops = [o for o, a in zip(inst.ops, act) if a is Activity.DUP]
    ops = list(inst.ops) + shadow_ops + [out_ptr]
    ret = g.module.functions[inst.callee_name].ret_type
    c = Instruction("call", ret, ops, name=(inst.name + ".aug") if inst.name else "",
                    callee=Global(T.ptr, aug), arg_attrs=["" for _ in ops])
    fwd.fb[blk].append(Instruction("store", T.void, [g.null_ptr, out_ptr]))
    fwd.fb[blk].append(c)
    shadow_pos = tuple(range(len(inst.ops), len(inst.ops) + len(shadow_ops)))
    fwd.clones.append((c, inst, shadow_pos))
    frame = Instruction("load", T.ptr, [out_ptr], name="callee.frame")
    fwd.fb[blk].append(frame)
    fwd.call_frames[inst] = frame
    ensure(g.module, "enzpy.push_child")
    children = fwd_field_address(fwd, blk, g.tape.children_list())
    free_fn = Global(T.ptr, free_name(aug))
    fwd.fb[blk].append(Instruction("call", T.void, [children, free_fn, frame],
                                   callee=Global(T.ptr, "enzpy.push_child"), arg_attrs=["", "", ""]))
    declare_split(g, inst, aug, act, ret, ops)
    tl = time_loop(g.module, inst.callee_name)
    if tl is not None and tl.status:
        forward_failure(g, MathBuilder(g.module, fwd.fb[blk]))
    return c


def free_name(aug: str) -> str:
    """F.free.N releases the frame F.aug.N returned, when its reverse will never run."""
    return aug.replace(".aug.", ".free.", 1)


def drop_name(aug_name: str) -> str:
    """F.drop: frees a frame F.aug keeps between calls (driver.split with keep_frame)."""
    return f"{aug_name}.drop"


def fwd_field_address(fwd, blk, field):
    """The address of frame field `field`, computed in the forward block of primal block blk."""
    return fwd.g.tape.frame.address(MathBuilder(fwd.g.module, fwd.fb[blk]), field)


def declare_split(g, inst, aug, act, ret, ops) -> None:
    if aug not in g.module.functions:
        g.module.declare(aug, ret, [o.type for o in ops])


def reverse_call(g, inst, block, b) -> None:
    _, rev, act = split_names(g, inst)
    home = g.loops.loop_of(inst.block)
    e = g.tape.entry(CallFrame(inst), T.ptr, home, "the called function's reverse sweep needs what it saved")
    frame = g.tape.read(b, e, block)
    args = [g.avail.primal(o, block, b) for o in inst.ops]
    dup = [o for o, a in zip(inst.ops, act) if a is Activity.DUP]
    if g.updates.wide and any(g.updates.memory_type(o, T.f32) != T.f32 for o in dup):
        raise g.unsupported("a call that is not inlined gets a float32 array whose adjoints are "
                            "summed in float64", inst, "Differentiate without float64 sums.")
    shadows = [g.avail.shadow(o, block, b) for o in dup]
    douts = []
    for o, a in zip(inst.ops, act):
        if a is Activity.ACTIVE:
            slot = g.alloca_builder.alloca(o.type, "dout")
            b.store(ConstFloat(o.type, 0.0), slot)
            douts.append((o, slot))
    ops = args + shadows + [s for _, s in douts] + [frame]
    if rev not in g.module.functions:
        g.module.declare(rev, T.void, [o.type for o in ops])
    b.emit(Instruction("call", T.void, ops, callee=Global(T.ptr, rev), arg_attrs=["" for _ in ops]))
    for o, slot in douts:
        g.add_adjoint(b, o, b.load(o.type, slot))
