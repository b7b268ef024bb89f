"""What both modes say when they stop: where an instruction comes from (file, line), how it
reads, and the UnsupportedError that names it."""
from __future__ import annotations

from ...analysis.types import roots
from ...errors import UnsupportedError
from ...ir.instructions import Instruction
from ...ir.printer import format_instruction
from ...ir.values import Argument


def locate(module, v):
    """The innermost source (file, line) of instruction v in a real file, or None.

    Code generated from a string (a parallel loop's body function) has locations in "<string>":
    then the nearest instruction of v's block, else of its function, with a real one answers."""
    if not isinstance(v, Instruction):
        return None
    found = _real(module, v)
    if found or v.block is None:
        return found
    block = v.block.instructions
    at = next((k for k, i in enumerate(block) if i is v), 0)
    nearest = sorted(range(len(block)), key=lambda k: abs(k - at))
    for i in [block[k] for k in nearest] + list(getattr(v.block.function, "instructions",
                                                         lambda: [])()):
        found = _real(module, i)
        if found:
            return found
    return None


def _real(module, inst):
    """The first (file, line) of inst's chain in a real file. A line of generated code
    ("<string>") is a real file's: a generated function (a parallel loop's body) keeps the lines
    of the source it was made from (`_source_of`)."""
    for f, line in module.location(inst):
        if not str(f).endswith(">"):
            return f, line
        g = _source_of(module, line) if line else None
        if g:
            return g, line
    return None


def _source_of(module, line):
    """The real file a generated line comes from: one whose located lines span it, else (a loop
    body's lines follow the loop's own, which may be the last located line of its function) the
    file with the most located lines among those whose first one comes before it."""
    spans = _spans(module)
    inside = [f for f, (lo, hi, _) in spans.items() if lo <= line <= hi]
    before = inside or [f for f, (lo, _, _) in spans.items() if lo <= line]
    return max(before, key=lambda f: spans[f][2]) if before else None


def _spans(module) -> dict:
    """{real file: (first line, last line, number of locations)} over the module's locations."""
    spans = {}
    for chain in module.locations.values():
        for f, line in chain:
            if line and not str(f).endswith(">"):
                lo, hi, n = spans.get(f, (line, line, 0))
                spans[f] = (min(lo, line), max(hi, line), n + 1)
    return spans


def describe(v) -> str:
    """v as LLVM text; never fails (a message must not)."""
    try:
        return format_instruction(v)
    except Exception:  # noqa: BLE001 - a message must never fail
        return getattr(v, "opcode", repr(v))


def unsupported(module, what: str, v, hint: str = "") -> UnsupportedError:
    """The error for construct `what` at v (an instruction, or another value named by its name)."""
    if isinstance(v, Instruction):
        return UnsupportedError(what, describe(v), locate(module, v), hint)
    return UnsupportedError(what, getattr(v, "name", ""), None, hint)


def describe_write(w) -> str:
    """'store to `%arg.x.4`' / 'call to `f`', for cache reasons."""
    if w.opcode == "store":
        names = [r.name for r in roots(w.ops[1]) if isinstance(r, Argument)]
        return f"store to `%{names[0]}`" if names else "store to local memory"
    if w.opcode == "call":
        return f"call to `{w.callee_name or 'a function pointer'}`"
    return f"`{w.flags[0] if w.flags else w.opcode}`"
