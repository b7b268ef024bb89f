"""Print the IR model as LLVM assembly that llvmlite parses."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .debug_scopes import Scoped, own_scopes
from .opcodes import BINARY, CASTS
from .types import VoidType

if TYPE_CHECKING:
    from .instructions import Instruction
    from .module import Function, Module

PLAIN_NAME = re.compile(r"^[-a-zA-Z$._][-a-zA-Z$._0-9]*$")


def ref_name(name: str) -> str:
    return name if PLAIN_NAME.match(name) else '"' + name + '"'


def legalize_names(fn: Function) -> None:
    """Give every local value a unique, non-numeric name (numbered names must be sequential)."""
    used: set[str] = set()
    counter = [0]

    def fix(v) -> None:
        n = v.name
        if not n or n.isdigit() or n in used:
            base = "t" if not n or n.isdigit() else n
            while True:
                counter[0] += 1
                cand = f"{base}.{counter[0]}"
                if cand not in used:
                    break
            n = cand
        used.add(n)
        v.name = n

    for a in fn.params:
        fix(a)
    for b in fn.blocks:
        fix(b)
    for i in fn.instructions():
        if not isinstance(i.type, VoidType) or i.name:
            if isinstance(i.type, VoidType):
                i.name = ""
                continue
            fix(i)


def r(v) -> str:
    """An operand reference."""
    s = v.ref()
    if s.startswith("%") or s.startswith("@"):
        return s[0] + ref_name(v.name)
    return s


def tv(v) -> str:
    return f"{v.type} {r(v)}"


def lbl(b) -> str:
    return f"label %{ref_name(b.name)}"


def format_instruction(i: Instruction) -> str:
    body = _body(i)
    head = f"%{ref_name(i.name)} = " if i.name and not isinstance(i.type, VoidType) else ""
    return head + body + (i.meta or "")


def _flags(i: Instruction) -> str:
    return "".join(f + " " for f in i.flags)


def _body(i: Instruction) -> str:  # noqa: C901 - one branch per instruction family
    op = i.opcode
    if op in BINARY:
        return f"{op} {_flags(i)}{i.type} {r(i.ops[0])}, {r(i.ops[1])}"
    if op == "fneg":
        return f"fneg {_flags(i)}{tv(i.ops[0])}"
    if op in ("icmp", "fcmp"):
        return f"{op} {_flags(i)}{i.pred} {tv(i.ops[0])}, {r(i.ops[1])}"
    if op in CASTS:
        return f"{op} {_flags(i)}{tv(i.ops[0])} to {i.type}"
    if op == "select":
        return f"select {_flags(i)}{tv(i.ops[0])}, {tv(i.ops[1])}, {tv(i.ops[2])}"
    if op == "phi":
        inc = ", ".join(f"[ {r(v)}, %{ref_name(b.name)} ]" for v, b in zip(i.ops, i.blocks))
        return f"phi {_flags(i)}{i.type} {inc}"
    if op == "load":
        vol = "volatile " if i.volatile else ""
        return f"load {vol}{i.type}, {tv(i.ops[0])}" + _align(i)
    if op == "store":
        vol = "volatile " if i.volatile else ""
        return f"store {vol}{tv(i.ops[0])}, {tv(i.ops[1])}" + _align(i)
    if op == "getelementptr":
        return f"getelementptr {_flags(i)}{i.source_type}, " + ", ".join(tv(v) for v in i.ops)
    if op == "alloca":
        n = f", {tv(i.ops[0])}" if i.ops else ""
        return f"alloca {i.source_type}{n}" + _align(i)
    if op == "call":
        return _call(i)
    if op == "ret":
        return f"ret {tv(i.ops[0])}" if i.ops else "ret void"
    if op == "br":
        if i.ops:
            return f"br {tv(i.ops[0])}, {lbl(i.targets[0])}, {lbl(i.targets[1])}"
        return f"br {lbl(i.targets[0])}"
    if op == "switch":
        cases = " ".join(f"{tv(k)}, {lbl(b)}" for k, b in i.cases)
        return f"switch {tv(i.ops[0])}, {lbl(i.targets[0])} [ {cases} ]"
    if op == "unreachable":
        return "unreachable"
    if op == "extractvalue":
        return f"extractvalue {tv(i.ops[0])}" + "".join(f", {k}" for k in i.indices)
    if op == "insertvalue":
        return f"insertvalue {tv(i.ops[0])}, {tv(i.ops[1])}" + "".join(f", {k}" for k in i.indices)
    if op == "freeze":
        return f"freeze {tv(i.ops[0])}"
    if op == "opaque":
        return i.raw.format(*[r(v) for v in i.ops])
    raise ValueError(f"cannot print opcode {op}")


def _align(i: Instruction) -> str:
    return f", align {i.align}" if i.align else ""


def _call(i: Instruction) -> str:
    parts = [i.tail, "call", _flags(i).strip(), i.cconv, i.ret_attrs, i.fnty_text or str(i.type)]
    head = " ".join(p for p in parts if p)
    args = []
    for k, v in enumerate(i.ops):
        attrs = i.arg_attrs[k] if k < len(i.arg_attrs) else ""
        args.append(f"{v.type} {attrs + ' ' if attrs else ''}{r(v)}")
    tail = f" {i.fn_attrs}" if i.fn_attrs else ""
    return f"{head} {r(i.callee)}({', '.join(args)}){tail}"


def format_function(fn: Function, *, debug: bool = True, scoped: Scoped | None = None) -> str:
    """fn as LLVM text; `debug=False`: without !dbg attachments; `scoped`: with its own
    subprogram and its locations renumbered onto it (debug_scopes.own_scopes)."""
    params = []
    for a in fn.params:
        pieces = [str(a.type), a.attrs, ("%" + ref_name(a.name)) if a.name else ""]
        params.append(" ".join(p for p in pieces if p))
    if fn.vararg:
        params.append("...")
    prefix = fn.prefix or ("declare" if fn.is_declaration else "define")
    head = f"{prefix} {fn.ret_type} @{ref_name(fn.name)}({', '.join(params)})"
    suffix = fn.suffix if debug else re.sub(r"\s*!dbg ![0-9]+", "", fn.suffix)
    if scoped is not None:
        suffix = f"{suffix} !dbg {scoped.subprogram}".strip()
    head += f" {suffix}" if suffix else ""
    if fn.is_declaration:
        return head
    legalize_names(fn)
    lines = [head + " {"]
    for k, b in enumerate(fn.blocks):
        if k:
            lines.append("")
        lines.append(f"{ref_name(b.name)}:")
        for i in b.instructions:
            dbg = _location(i, scoped) if scoped is not None else f", !dbg {i.dbg}" if debug and i.dbg else ""
            lines.append("  " + format_instruction(i) + dbg)
    lines.append("}")
    return "\n".join(lines)


def _location(i: Instruction, scoped: Scoped) -> str:
    d = scoped.dbg.get(i.dbg, "") or (scoped.fallback if i.opcode == "call" else "")
    return f", !dbg {d}" if d else ""


def print_module(mod: Module, *, locate_generated: bool = False) -> str:
    """The module as LLVM text. Functions a transform generated print without !dbg attachments,
    or with `locate_generated` with them, each on a subprogram of its own (debug_scopes.py)."""
    scoped, added = {}, []
    if locate_generated:
        made = [f for f in mod.items if not isinstance(f, str) and f.generated and not f.is_declaration]
        scoped, added = own_scopes([x for x in mod.items if isinstance(x, str)], made)
    out = []
    for item in mod.items:
        if isinstance(item, str):
            out.append(item)
        elif item.is_declaration and item.raw:
            out.append(item.raw)
        else:
            out.append(format_function(item, debug=not item.generated, scoped=scoped.get(item)))
    return "\n".join(out + added) + "\n"
