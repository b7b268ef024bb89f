"""Type analysis: what each value holds (float, integer, pointer), and what the memory behind each
pointer holds, learned from the loads and stores that use it.

A pointer kept in memory and loaded back (a host may keep an array's data pointer in a struct on the
stack) reaches the same memory as the pointer stored: a store of pointer `v` into slot `s` and a
load of a pointer from `s` (the same base object and constant byte offset) join their base
objects into one class, whose memory holds what is accessed through any of them."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import types as T
from ..ir.values import Argument, ConstInt

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


def slot(p):
    """(base object, constant byte offset) of the address p, or None when not constant."""
    offset = 0
    while getattr(p, "opcode", None) in ("getelementptr", "bitcast", "addrspacecast"):
        if p.opcode == "getelementptr":
            step = _gep_offset(p)
            if step is None:
                return None
            offset += step
        p = p.ops[0]
    if getattr(p, "opcode", None) in ("select", "phi"):
        return None
    return p, offset


def _gep_offset(g):
    t, indices = g.source_type, g.ops[1:]
    if not indices or not all(isinstance(i, ConstInt) for i in indices):
        return None
    try:
        offset = indices[0].value * T.size_of(t)
        for i in indices[1:]:
            if isinstance(t, T.StructType):
                offset += sum(T.size_of(e) for e in t.elements[:i.value])
                t = t.elements[i.value]
            elif isinstance(t, (T.ArrayType, T.VectorType)):
                t = t.element
                offset += i.value * T.size_of(t)
            else:
                return None
    except (ValueError, IndexError):
        return None
    return offset


@dataclass
class TypeInfo:
    memory: dict = field(default_factory=dict)  # root -> set of element types accessed through it
    classes: dict = field(default_factory=dict)  # root -> roots reaching the same memory
    declared: dict = field(default_factory=dict)  # id(parameter) -> the float type its caller declares

    def value_kind(self, v) -> str:
        return kind(v.type)

    def memory_types(self, ptr) -> set:
        out = set()
        for r in roots(ptr):
            for m in self.classes.get(r, (r,)):
                out |= self.memory.get(m, set())
        return out

    def unread(self, ptr) -> bool:
        """Does the function never load or store through ptr's memory (a handle only its
        runtime reads, as a parameter's allocation handle)?"""
        return not self.memory_types(ptr)

    def float_type_behind(self, ptr) -> T.FloatType | None:
        """The one float type stored behind ptr, or None when it holds none or several. Memory
        the function accesses only through calls (a copy handed to BLAS) has the type its
        parameter's caller declares, when ptr reaches only such parameters."""
        fl = {t for t in self.memory_types(ptr) if isinstance(t, T.FloatType)}
        if not fl:
            fl = {self.declared.get(id(r)) for r in roots(ptr)}
            fl = set() if None in fl else fl
        return next(iter(fl)) if len(fl) == 1 else None


def type_analysis(fn, declared=None) -> TypeInfo:
    """`declared`: {parameter index: the float type its memory holds}, from the caller."""
    info = TypeInfo()
    info.declared = {id(fn.params[k]): t for k, t in (declared or {}).items() if t is not None}
    stored, loaded = {}, {}   # slot -> roots of the pointers stored there / loads from it
    for inst in fn.instructions():
        if inst.opcode == "load":
            access = (inst.ops[0], inst.type)
            if isinstance(inst.type, T.PtrType):
                _add(loaded, slot(inst.ops[0]), [inst])
        elif inst.opcode == "store":
            access = (inst.ops[1], inst.ops[0].type)
            if isinstance(inst.ops[0].type, T.PtrType):
                _add(stored, slot(inst.ops[1]), roots(inst.ops[0]))
        else:
            continue
        for r in roots(access[0]):
            info.memory.setdefault(r, set()).add(access[1])
    info.classes = _join({k: stored[k] + loaded[k] for k in stored if k in loaded})
    return info


def _add(table, key, values) -> None:
    if key is not None:
        table.setdefault((id(key[0]), key[1]), []).extend(values)


def _join(groups: dict) -> dict:
    """root -> the list of roots joined with it through any group (union-find)."""
    parent = {}

    def find(r):
        while parent.get(id(r), r) is not r:
            r = parent[id(r)]
        return r
    for members in groups.values():
        head = find(members[0])
        for m in members[1:]:
            other = find(m)
            if other is not head:
                parent[id(other)] = head
    out = {}
    for members in groups.values():
        for m in members:
            out.setdefault(id(find(m)), {})[id(m)] = m
    return {m: list(cls.values()) for cls in out.values() for m in cls.values()}


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
