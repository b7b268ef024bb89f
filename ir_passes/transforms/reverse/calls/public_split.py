"""A top-level gradient split into two entry points whose tape outlives the forward sweep.

`<name>.aug.0(primal params, shadow params, ptr frame_out) -> status` runs the augmented forward
sweep and leaves its frame (the tape) in *frame_out; `<name>.rev(primal params, shadow params,
derivative slots, ptr frame)` runs the reverse sweep from it, as often as the caller likes;
`<name>.free(ptr frame)` releases it. A frame outlives its call (driver.split with keep_frame):
`<name>.reset(ptr frame)` releases what one call made and keeps the frame and its tape arrays,
and an `.aug.0` entered with such a frame in *frame_out (null: a new frame) fills it again,
its arrays' capacities kept, so a caller can pool frames; even a failed `.aug.0` leaves its
frame in *frame_out. `.free` is `.reset` then `<name>.drop`, which frees the frame and its arrays.

The gradient is synthesized as a callee's split gradient (driver.split), so every primal value
its reverse sweep needs is on the tape or recomputed from the parameters' scalars: the reverse
reads no primal memory. Two changes make the reverse repeatable: it releases nothing (`.reset`
does), and it runs on a copy of the frame, so the loop counters it steps back to zero are the
forward's again for the next run.
"""
from __future__ import annotations

from ....errors import UnsupportedError
from ....ir import types as T
from ....ir.builder import MathBuilder
from ....ir.module import Block, Function
from ....ir.values import Argument, ConstInt
from .calls import drop_name, free_name

FREES = ("free", "enzpy.heap.free")   # runtime/heap.py's free of the frame


def keep_tape(g, rev) -> None:
    """Before driver.split: the end of the reverse sweep releases nothing and keeps the frame."""
    for m, failed in list(g.tape.release_markers):
        if not failed:
            m.block.instructions.remove(m)
            g.tape.release_markers.remove((m, failed))
    frame = g.tape.frame.pointer
    blk = rev.finish_block
    blk.instructions = [i for i in blk.instructions
                        if not (i.opcode == "call" and i.callee_name in FREES and i.ops[-1] is frame)]


def check(g) -> None:
    """What a repeatable reverse sweep cannot hold: callee frames, per-thread state."""
    if g.tape.children is not None:
        raise UnsupportedError("split mode: the kernel calls a function that is not inlined "
                               "(recursion); use autodiff")
    if g.tape.on_release:
        raise UnsupportedError("split mode: parallel loops are not supported; use autodiff")


def entry_points(g, name: str, aug_name: str, sweep_name: str) -> None:
    """`name.rev` (the sweep on a copy of the frame), `name.reset`, `name.drop` and `name.free`; record the frame's size
    and the capacities behind its arrays in the layout (the tape's bytes, for `explain`)."""
    module = g.module
    module.functions[aug_name].prefix = "define"
    size = max(g.tape.frame.size, 8)
    params = [Argument(p.type, f"p{k}", "", k) for k, p in enumerate(g.params)]
    frame = Argument(T.ptr, "frame", "", len(params))
    rev = _function(module, name + ".rev", params + [frame])
    b = MathBuilder(module, rev.blocks[0])
    copy = b.alloca(T.ArrayType(size, T.i8), "frame.copy")
    b.call("llvm.memcpy.p0.p0.i64", T.void, [copy, frame, ConstInt(T.i64, size), ConstInt(T.i1, 0)])
    b.call(sweep_name, T.void, params + [copy])
    b.ret()
    for entry, calls in ((".reset", [free_name(aug_name)]), (".drop", [drop_name(aug_name)]),
                         (".free", [free_name(aug_name), drop_name(aug_name)])):
        param = Argument(T.ptr, "frame", "", 0)
        b = MathBuilder(module, _function(module, name + entry, [param]).blocks[0])
        for callee in calls:
            b.call(callee, T.void, [param])
        b.ret()
    for lp, f in g.tape.capacity.items():
        if not g.tape.fixed_capacity(lp):
            g.layout.held.append((f.offset, g.tape.bytes_per_iteration(lp)))
    for lp in g.loops.loops:
        if g.tape.loop_entries(lp):
            g.layout.counters[lp.index] = g.tape.counter(lp).offset
    ptrs = [f for f in g.tape.buffers if f.type == T.ptr]
    caps = [f for f in g.tape.buffers if f.type != T.ptr]
    g.layout.held += [(c.offset, 1) for c in caps[:len(ptrs)]]
    g.layout.frame_bytes = size


def _function(module, name, params):
    f = Function(name, T.void, params, prefix="define")
    f.generated = True
    f.blocks = [Block("entry", f)]
    module.add_function(f)
    return f
