"""Small edits of function bodies: code built on a scratch block and moved into place, uses
replaced."""
from __future__ import annotations

from typing import Callable

from .builder import MathBuilder
from .module import Block, Function
from .values import Value


def insert_at(block: Block, index: int, scratch: Block) -> None:
    """Move the instructions of `scratch` into `block`, the first at position `index`."""
    for j, inst in enumerate(scratch.instructions):
        block.insert(index + j, inst)


def emit_at(module, block: Block, index: int, emit: Callable[[MathBuilder], object],
            name: str = "tmp") -> Block:
    """Build code with `emit(builder)` on a scratch block, then move it into `block` at `index`.
    Returns the scratch block: callers whose memos key on a block's id keep it alive."""
    scratch = Block(name)
    emit(MathBuilder(module, scratch))
    insert_at(block, index, scratch)
    return scratch


def splice(module, marker, emit: Callable[[MathBuilder], object], name: str = "splice") -> Block:
    """Replace the marker instruction `marker` with the code `emit(builder)` builds; returns the
    scratch block (see emit_at)."""
    block = marker.block
    k = block.instructions.index(marker)
    block.instructions.pop(k)
    return emit_at(module, block, k, emit, name)


def before_terminator(module, block: Block, emit: Callable[[MathBuilder], object],
                      name: str = "tmp") -> Block:
    """emit_at the position of `block`'s last instruction (its terminator)."""
    return emit_at(module, block, len(block.instructions) - 1, emit, name)


def replace_uses(fn: Function, old: Value, new: Value) -> None:
    """Every operand `old` of `fn`'s instructions becomes `new`."""
    for inst in fn.instructions():
        inst.ops = [new if o is old else o for o in inst.ops]


__all__ = ["before_terminator", "emit_at", "insert_at", "replace_uses", "splice"]
