"""Allocations kept alive until the reverse sweep ends.

A kernel frees its temporaries (`np.empty`) before it returns, so the reverse sweep cannot read
them again and tapes every value it needs from them, even values nothing overwrites. For an
allocation whose allocator has reference counting (rules/effects.py: retain / release) and
that is made outside every loop (so at most once per call), the forward sweep takes one more
reference right after it and keeps the handle in a frame field; every exit of the gradient (after
the reverse sweep, or on an error path) drops it. Alias analysis then treats that memory like a
parameter's: a load that nothing overwrites afterwards is read again in the reverse sweep.
"""
from __future__ import annotations

from ....ir import types as T
from ....ir.instructions import Instruction
from ....rules.effects import ALLOCATORS


def retained_allocations(g) -> tuple:
    """({id(handle): Allocator} for the allocations to keep, {id(data pointer call)} of them)."""
    if g.split:
        return {}, set()
    handles, data = {}, set()
    for inst in g.primal.instructions():
        if inst.opcode != "call" or not inst.ops:
            continue
        handle = inst.ops[0]
        if not isinstance(handle, Instruction) or handle.opcode != "call" or \
                g.loops.loop_of(handle.block) is not None:
            continue
        a = ALLOCATORS.get((handle.callee_name, inst.callee_name))
        if a is not None and a.retain and a.release:
            handles[id(handle)] = a
            data.add(id(inst))
    return handles, data


def retain(g, b, handle, handle_value) -> None:
    """In the forward sweep, right after the allocation: one more reference, kept in the frame."""
    a = g.retained[id(handle)]
    field = g.tape.new_field(T.ptr, g.null_ptr)
    g.retained_fields.append((field, a))
    g.module.declare(a.retain, T.void, [T.ptr])
    b.call(a.retain, T.void, [handle_value])
    g.tape.store(b, handle_value, field)


def release_all(g, b) -> None:
    """At an exit of the gradient: drop the references taken (null when never taken)."""
    for field, a in g.retained_fields:
        g.module.declare(a.release, T.void, [T.ptr])
        b.call(a.release, T.void, [g.tape.load(b, field)])
