"""Activity analysis.

- A pointer is *shadowed* when it is derived from a "dup" parameter: its memory has a shadow.
- A value is *varying* when it depends on an active input: an "active" parameter, a float loaded
  from shadowed memory, or an operation on a varying value.
- A value is *useful* when it can reach an active output: a float stored into shadowed memory, or
  an operand of a useful operation.
- A value is *active* when it is varying, useful and holds floats. Only active values get adjoint
  code. Integers, Const parameters and anything that cannot reach an output produce none.
- Pointers stored in memory: storing a shadowed pointer into local memory shadows that memory, and
  a pointer loaded from shadowed memory is shadowed (its shadow is loaded from the shadow memory).
- A call to a function defined in the module is *differentiated* (split into an augmented forward
  and a reverse) when it takes a varying value or shadowed memory. A local alloca becomes shadowed
  when varying data is stored into it or a differentiated call gets it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UnsupportedError
from ..ir.values import Argument, Constant
from .types import kind

PROPAGATE = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fpext", "fptrunc", "select", "phi",
             "call", "freeze", "extractvalue", "insertvalue", "bitcast", "load"}
SHADOW_OPS = {"getelementptr", "bitcast", "addrspacecast", "select", "phi"}


class ConstantMemoryError(UnsupportedError):
    """Active data is stored into memory that has no shadow (a Const argument)."""

    def __init__(self, param_index, instruction="", location=None):
        self.param_index = param_index
        super().__init__("active data is stored into constant memory (a Const argument)",
                         instruction, location,
                         "Pass that array as Duplicated(array, shadow) so its derivative has a home.")


@dataclass
class Activity:
    shadowed: set = field(default_factory=set)   # ids of pointer values with a shadow
    varying: set = field(default_factory=set)
    useful: set = field(default_factory=set)
    active_params: set = field(default_factory=set)

    def has_shadow(self, v) -> bool:
        return id(v) in self.shadowed

    def is_active(self, v) -> bool:
        if isinstance(v, Constant) or kind(v.type) != "float":
            return False
        return id(v) in self.varying and id(v) in self.useful


def float_args(inst) -> bool:
    return any(kind(o.type) == "float" for o in inst.ops)


def is_defined_call(inst, module) -> bool:
    if inst.opcode != "call":
        return False
    f = module.functions.get(inst.callee_name) if module is not None else None
    return f is not None and not f.is_declaration


def activity_analysis(fn, activity: list[str], module=None) -> Activity:
    act = Activity()
    act.module = module
    insts = list(fn.instructions())
    for a, mode in zip(fn.params, activity):
        if mode == "dup":
            act.shadowed.add(id(a))
        elif mode == "active":
            act.varying.add(id(a))
            act.active_params.add(id(a))
    _forward(insts, act)
    _backward(insts, act)
    return act


def differentiated(act: Activity, i) -> bool:
    """A call into module code that touches varying values or shadowed memory."""
    return is_defined_call(i, getattr(act, "module", None)) and \
        any(id(o) in act.varying or id(o) in act.shadowed for o in i.ops)


def _forward(insts, act: Activity) -> None:
    changed = True
    while changed:
        changed = False
        for i in insts:
            if i.opcode == "store" and (id(i.ops[0]) in act.varying and kind(i.ops[0].type) == "float"
                                        or id(i.ops[0]) in act.shadowed):
                for r in _alloca_roots(i.ops[1]):
                    if id(r) not in act.shadowed:
                        act.shadowed.add(id(r))
                        changed = True
            if i.opcode == "load" and kind(i.type) == "ptr" and id(i.ops[0]) in act.shadowed \
                    and id(i) not in act.shadowed:
                act.shadowed.add(id(i))
                changed = True
            if i.opcode == "call" and _dot_out(i) is not None and \
                    any(id(o) in act.shadowed for o in i.ops):
                for r in _alloca_roots(_dot_out(i)):
                    if id(r) not in act.shadowed:
                        act.shadowed.add(id(r))
                        changed = True
            if i.opcode == "call" and differentiated(act, i):
                for o in i.ops:
                    for r in _alloca_roots(o) if kind(o.type) == "ptr" else ():
                        if id(r) not in act.shadowed:
                            act.shadowed.add(id(r))
                            changed = True
            if kind(i.type) == "ptr" and i.opcode in SHADOW_OPS and id(i) not in act.shadowed:
                srcs = i.ops[1:] if i.opcode == "select" else (i.ops if i.opcode == "phi" else i.ops[:1])
                if any(id(s) in act.shadowed for s in srcs):
                    act.shadowed.add(id(i))
                    changed = True
            if i.opcode in ("phi", "select") and id(i) in act.shadowed:
                # local memory merged with shadowed memory gets a (zeroed) shadow of its own
                for r in _alloca_roots(i):
                    if id(r) not in act.shadowed:
                        act.shadowed.add(id(r))
                        changed = True
            if id(i) in act.varying or i.opcode not in PROPAGATE:
                continue
            if i.opcode == "load":
                hit = kind(i.type) == "float" and id(i.ops[0]) in act.shadowed and \
                    not _const_memory(i.ops[0], act)
            elif i.opcode == "select":
                hit = any(id(o) in act.varying for o in i.ops[1:])
            else:
                hit = any(id(o) in act.varying for o in i.ops)
            if hit:
                act.varying.add(id(i))
                changed = True


def _const_memory(p, act: Activity) -> bool:
    """p points only into Const parameters' memory. A pointer there has a shadow when it also
    feeds a phi or select with shadowed memory (a stand-in, transforms/dummy.py), but what it
    loads is constant: storing differentiable data into a Const parameter is refused
    (check_constant_stores)."""
    from .types import roots
    rs = roots(p)
    return bool(rs) and all(isinstance(r, Argument) and id(r) not in act.shadowed for r in rs)


def _dot_out(call):
    from ..rules.blas import DOTS
    dot = DOTS.get(call.callee_name)
    return call.ops[dot.out] if dot is not None else None


def _alloca_roots(p) -> list:
    """The local memory p may point into: allocas and allocations made by the function."""
    from ..rules.allocators import allocation_size
    from .types import roots
    return [r for r in roots(p) if getattr(r, "opcode", None) == "alloca"
            or (getattr(r, "opcode", None) == "call" and allocation_size(r) is not None)]


def _backward(insts, act: Activity) -> None:
    changed = True
    while changed:
        changed = False
        for i in reversed(insts):
            if i.opcode == "store" and id(i.ops[1]) in act.shadowed:
                targets = [i.ops[0]]
            elif i.opcode == "call" and differentiated(act, i):
                targets = list(i.ops)
            elif id(i) in act.useful and i.opcode in PROPAGATE:
                targets = i.ops[1:] if i.opcode == "select" else list(i.ops)
            else:
                continue
            for o in targets:
                if id(o) not in act.useful and not isinstance(o, Constant):
                    act.useful.add(id(o))
                    changed = True


def check_constant_stores(fn, act: Activity, locate) -> None:
    """Refuse active data stored into memory without a shadow (Enzyme's 'constant memory is
    stored to a differentiable variable')."""
    from ..ir.printer import format_instruction
    from .types import roots
    for i in fn.instructions():
        const = _const_param_written(i, act)
        if const is not None:
            raise ConstantMemoryError(const, format_instruction(i), locate(i))
        if i.opcode != "store" or id(i.ops[1]) in act.shadowed:
            continue
        v = i.ops[0]
        if kind(v.type) == "float" and id(v) in act.varying:
            rs = roots(i.ops[1])
            param = next((r.index for r in rs if isinstance(r, Argument)), None)
            if param is None:
                raise UnsupportedError("active data is stored into memory that has no shadow",
                                       format_instruction(i), locate(i))
            raise ConstantMemoryError(param, format_instruction(i), locate(i))


def _const_param_written(i, act: Activity):
    """A Const parameter that `i` may write differentiable data into through a pointer that
    also reaches shadowed memory (`p = x if c else a`; the loads of x elsewhere would not see
    the derivative), or None."""
    from .types import roots
    if i.opcode == "store":
        if kind(i.ops[0].type) != "float" or id(i.ops[0]) not in act.varying:
            return None
        dests = [i.ops[1]]
    elif i.opcode == "call" and differentiated(act, i):
        dests = [o for o in i.ops if kind(o.type) == "ptr"]
    elif i.opcode == "call" and (i.callee_name or "").startswith(("llvm.memcpy", "llvm.memmove")):
        if id(i.ops[1]) not in act.shadowed:
            return None
        dests = [i.ops[0]]
    else:
        return None
    for d in dests:
        if id(d) not in act.shadowed:
            continue
        for r in roots(d):
            if isinstance(r, Argument) and id(r) not in act.shadowed:
                return r.index
    return None


def check_integer_views(fn, act: Activity, locate) -> None:
    """Refuse reading differentiable float memory as integers (a bit-level view of a float): the
    integer would carry the float's value with no derivative, a silent zero."""
    from ..ir.printer import format_instruction
    from .types import roots
    float_roots = set()
    for i in fn.instructions():
        if i.opcode in ("load", "store"):
            t = i.type if i.opcode == "load" else i.ops[0].type
            if kind(t) == "float":
                float_roots |= {id(r) for r in roots(i.ops[-1] if i.opcode == "store" else i.ops[0])}
    for i in fn.instructions():
        if i.opcode != "load" or kind(i.type) != "int" or id(i.ops[0]) not in act.shadowed:
            continue
        rs = roots(i.ops[0])
        if any(id(r) in float_roots and getattr(r, "opcode", None) != "alloca" for r in rs):
            raise UnsupportedError("differentiable float data is read as an integer (a bit-level "
                                   "view of a float)", format_instruction(i), locate(i))


def print_activity(fn, activity: list[str]) -> str:
    act = activity_analysis(fn, activity)
    out = []
    for i in fn.instructions():
        if i.name:
            tag = "active" if act.is_active(i) else ("shadowed" if act.has_shadow(i) else "const")
            out.append(f"%{i.name}: {tag}")
    return "\n".join(out)
