"""What both modes say when they stop: where an instruction comes from (file, line), how it
reads, and the UnsupportedError that names it."""
from __future__ import annotations

from ...analysis.types import roots
from ...errors import UnsupportedError
from ...ir.instructions import Instruction
from ...ir.printer import format_instruction
from ...ir.values import Argument


def locate(module, v):
    """The innermost source (file, line) of instruction v, or None."""
    chain = module.location(v) if isinstance(v, Instruction) else []
    return chain[0] if chain else None


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
