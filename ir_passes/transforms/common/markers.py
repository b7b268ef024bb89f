"""Lifetime markers (`llvm.lifetime.start/end`) must name an alloca of their own function: LLVM's
verifier rejects any other pointer. Code moved into another function can leave a marker on a
value that is no longer one (a caller's alloca that the new function takes as a parameter).
Markers are only hints, so such a marker is dropped."""
from __future__ import annotations

from ...ir.instructions import Instruction

MARKER = "llvm.lifetime."


def is_marker(inst) -> bool:
    return inst.opcode == "call" and (inst.callee_name or "").startswith(MARKER)


def drop_stray_markers(fn) -> None:
    """Remove the lifetime markers of fn whose pointer is not one of fn's allocas."""
    for b in fn.blocks:
        b.instructions = [i for i in b.instructions if not (is_marker(i) and not _own_alloca(i.ops[-1], fn))]


def _own_alloca(p, fn) -> bool:
    return isinstance(p, Instruction) and p.opcode == "alloca" and p.block is not None and \
        p.block in fn.blocks
