"""Restoring overwritten memory in the reverse sweep, so loads can be repeated instead of taped.

When every write that may clobber a load is a plain store into a parameter's memory whose extent
is known, the reverse sweep can undo those stores as it walks back: the forward sweep saves the
value each such store overwrites (the tape holds exactly the overwritten values), and the reverse
of the store puts it back. Memory then reads as it did in the forward sweep at that point, and the
load is simply repeated. The arrays' final contents are copied aside when the forward sweep ends
and copied back when the reverse sweep finishes, so callers see what a plain call leaves.
"""
from __future__ import annotations

from ....analysis.types import roots
from ....ir import types as T
from ....ir.edit import before_terminator
from ....ir.instructions import Instruction
from ....ir.values import Argument, ConstInt
from ....options import CacheMode
from ....runtime.helpers import ensure
from ...common.extent import extent_bounds
from .tape_keys import Overwritten


def restorable(g, load) -> bool:
    """Can `load` be repeated in the reverse of its own block once later stores are undone?"""
    if g.split or not g.extents or g.cache_mode is CacheMode.ALWAYS:
        return False
    writes = g.alias.clobbers(load)
    if not writes:
        return False
    for w in writes:
        if w.opcode != "store" or w.block is load.block and _after(w, load):
            return False
        rs = roots(w.ops[1])
        if not all(isinstance(r, Argument) and r.index in g.extents for r in rs):
            return False
    return True


def _after(w, load) -> bool:
    ins = load.block.instructions
    return ins.index(w) > ins.index(load)


def mark(g, load) -> None:
    """The stores that clobber `load` must be undone in the reverse sweep."""
    for w in g.alias.clobbers(load):
        g.restores.add(w)


def marker(g, store, b) -> None:
    """Leave a place in the reverse of `store` where its undo goes, if it turns out needed."""
    m = Instruction("marker")
    b.emit(m)
    g.restore_markers[store] = m


def emit_undos(g) -> None:
    """Replace each needed marker with the undo: reload the saved value and store it back.
    Emitting an undo may mark more stores (its address may need a restored load): repeat."""
    done = set()
    while True:
        pending = [s for s in g.restore_markers if s in g.restores and s not in done]
        if not pending:
            break
        for store in pending:
            done.add(store)
            _undo(g, store)
    for m in g.restore_markers.values():
        if m in m.block.instructions:
            m.block.instructions.remove(m)


def _undo(g, store) -> None:
    def undo(b):
        home = g.loops.loop_of(store.block)
        e = g.tape.entry(Overwritten(store), store.ops[0].type, home, "the value a store overwrites",
                         source=store)
        old = g.tape.read(b, e, store.block)
        b.store(old, g.avail.primal(store.ops[1], store.block, b), align=store.align)
    g.splice(g.restore_markers[store], undo, f"undo.{len(g.keep_alive)}")


def restored_roots(g) -> list:
    out = []
    for w in g.restores:
        for r in roots(w.ops[1]):
            if r not in out:
                out.append(r)
    return out


def span(g, b, root):
    """(first byte, size in bytes) of a parameter's memory."""
    lo, size = bounds(g, b, root)
    return b.gep(T.i8, g.params[root.index], [lo]), size


def bounds(g, b, root):
    """(offset of the first byte from the parameter's pointer, size in bytes) of its memory."""
    return extent_bounds(b, g.params, g.extents[root.index])


def snapshot(g, fwd) -> None:
    """Copy the final contents of restored arrays aside where the forward sweep succeeds, and
    back when the reverse sweep finishes. The copies live in scratch buffers that are parked
    with the tape between calls (tape.buffers), so a repeat call allocates none."""
    restored = restored_roots(g)
    if not restored:
        return
    fields = {r: (g.tape.new_field(T.ptr, g.null_ptr), g.tape.new_field(T.i64, ConstInt(T.i64, 0)))
              for r in restored}
    for f, cap in fields.values():
        g.tape.buffers += [f, cap]
    ensure(g.module, "enzpy.buffer")

    def copy_aside(b):
        for r in restored:
            start, size = span(g, b, r)
            f, cap = fields[r]
            copy = b.call("enzpy.buffer", T.ptr, [g.tape.frame.address(b, f),
                                                  g.tape.frame.address(b, cap), size])
            b.call("llvm.memcpy.p0.p0.i64", T.void, [copy, start, size, ConstInt(T.i1, 0)])
    for blk, _ in fwd.success_exits:
        before_terminator(g.module, blk, copy_aside, "snapshot")
    g.final_copies = {r: f for r, (f, _) in fields.items()}


def put_back(g, b) -> None:
    """At the end of the reverse sweep: the arrays' final contents, as the forward sweep left them."""
    for r, f in g.final_copies.items():
        start, size = span(g, b, r)
        copy = g.tape.load(b, f)
        b.call("llvm.memcpy.p0.p0.i64", T.void, [start, copy, size, ConstInt(T.i1, 0)])
