"""The reverse of a reallocation that moved a shadow (a growing list: forward_sweep.celled_shadow).

The forward sweep moved the handle's shadow with the primal's data: a zeroed buffer of the new
size received the old shadow's first min(old, n) bytes, and the old buffer stays allocated until
the gradient ends. Instructions before the reallocation reach the old buffer, those after it the
new one. Where the reverse sweep passes the reallocation backwards, the adjoints of the kept
bytes go back to the old buffer. A byte copy is exact: nothing after the reallocation reaches the
old buffer, so its float adjoints are still zero there (and the pointers kept in it are the ones
the forward sweep copied)."""
from __future__ import annotations

from ....ir import types as T
from ....ir.values import ConstInt
from ..tape.tape_keys import Moved

REASON = "a growing allocation's shadow moved here"


def reverse_move(g, inst, block, b) -> None:
    """memcpy(old shadow, new shadow, bytes kept), with the forward sweep's values from the tape."""
    old, kept = g.fwd.moves[id(inst)]
    home = g.loops.loop_of(inst.block)
    o = g.tape.read(b, g.tape.entry(Moved(inst, old), T.ptr, home, REASON), block)
    n = g.tape.read(b, g.tape.entry(Moved(inst, kept), T.i64, home, REASON), block)
    new = g.avail.shadow(inst, block, b)
    g.module.declare("llvm.memcpy.p0.p0.i64", T.void, [T.ptr, T.ptr, T.i64, T.i1])
    b.call("llvm.memcpy.p0.p0.i64", T.void, [o, new, n, ConstInt(T.i1, 0)])
