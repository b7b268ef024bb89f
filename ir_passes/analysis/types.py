"""Type analysis: what each value holds (float, integer, pointer), and what the memory behind each
pointer holds, learned from the loads, stores and memory intrinsics that use it."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import types as T
from ..ir.values import Argument

POINTER_OPS = {"getelementptr", "bitcast", "addrspacecast", "select", "phi"}


def kind(t: T.Type) -> str:
    if isinstance(t, T.FloatType):
        return "float"
    if isinstance(t, T.IntType):
        return "int"
    if isinstance(t, T.PtrType):
        return "ptr"
    if isinstance(t, T.VectorType):
        return kind(t.element)
    return "other"


def roots(v, seen=None) -> list:
    """The base objects a pointer may point into: arguments, allocas, calls, globals."""
    seen = set() if seen is None else seen
    if id(v) in seen:
        return []
    seen.add(id(v))
    op = getattr(v, "opcode", None)
    if op in ("getelementptr", "bitcast", "addrspacecast"):
        return roots(v.ops[0], seen)
    if op == "select":
        return roots(v.ops[1], seen) + roots(v.ops[2], seen)
    if op == "phi":
        out = []
        for x in v.ops:
            out += roots(x, seen)
        return out
    return [v]


@dataclass
class TypeInfo:
    memory: dict = field(default_factory=dict)  # root -> set of element types accessed through it

    def value_kind(self, v) -> str:
        return kind(v.type)

    def memory_types(self, ptr) -> set:
        out = set()
        for r in roots(ptr):
            out |= self.memory.get(r, set())
        return out

    def float_type_behind(self, ptr) -> T.FloatType | None:
        """The one float type stored behind ptr, or None when it holds none or several."""
        fl = {t for t in self.memory_types(ptr) if isinstance(t, T.FloatType)}
        return next(iter(fl)) if len(fl) == 1 else None


def type_analysis(fn) -> TypeInfo:
    info = TypeInfo()
    for inst in fn.instructions():
        if inst.opcode == "load":
            access = (inst.ops[0], inst.type)
        elif inst.opcode == "store":
            access = (inst.ops[1], inst.ops[0].type)
        else:
            continue
        for r in roots(access[0]):
            info.memory.setdefault(r, set()).add(access[1])
    return info


def print_types(fn) -> str:
    info = type_analysis(fn)
    lines = []
    for a in fn.params:
        mem = ", ".join(sorted(str(t) for t in info.memory.get(a, ())))
        lines.append(f"%{a.name}: {kind(a.type)}" + (f" -> [{mem}]" if mem else ""))
    for i in fn.instructions():
        if i.name:
            lines.append(f"%{i.name}: {kind(i.type)}")
    return "\n".join(lines)


__all__ = ["Argument", "TypeInfo", "kind", "roots", "type_analysis", "print_types"]
