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
  The calls that yield the data of one allocation handle (each use of a list's payload asks for
  it again) are shadowed together.
- A call to a function defined in the module is *differentiated* (split into an augmented forward
  and a reverse) when it takes a varying value or shadowed memory. A local alloca becomes shadowed
  when varying data is stored into it, shadowed memory is copied into it (memcpy, memmove) or a
  differentiated call gets it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UnsupportedError
from ..ir.instructions import Instruction
from ..ir.printer import format_instruction
from ..ir.values import Argument, Constant
from ..options import Activity, activities
from ..rules.blas import lookup_blas
from ..rules.parallel import lookup_parallel, passed_pointers
from ..rules.effects import (allocation_size, copy_in_operands, copy_out_operands, element_dtor_arg,
                             getter_object,
                             handle_groups, handle_of)
from .types import kind, roots

PROPAGATE = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fpext", "fptrunc", "select", "phi",
             "call", "freeze", "extractvalue", "insertvalue", "bitcast", "load"}
SHADOW_OPS = {"getelementptr", "bitcast", "addrspacecast", "select", "phi"}
COPIES = ("llvm.memcpy", "llvm.memmove")


class ConstantMemoryError(UnsupportedError):
    """Active data is stored into memory that has no shadow (a Const argument)."""

    def __init__(self, param_index, instruction="", location=None):
        self.param_index = param_index
        super().__init__("active data is stored into constant memory (a Const argument)",
                         instruction, location,
                         "Pass that array as Duplicated(array, shadow) so its derivative has a home.")


@dataclass
class ActivityInfo:
    shadowed: set = field(default_factory=set)   # ids of pointer values with a shadow
    varying: set = field(default_factory=set)
    useful: set = field(default_factory=set)
    active_params: set = field(default_factory=set)
    module: object = None     # the module, whose defined functions calls are differentiated into
    ptr_holders: set = field(default_factory=set)  # forward_activity.py: roots of memory holding
    #                                                pointers with shadows

    def has_shadow(self, v) -> bool:
        return id(v) in self.shadowed

    def is_active(self, v) -> bool:
        if isinstance(v, Constant) or kind(v.type) != "float":
            return False
        return id(v) in self.varying and id(v) in self.useful


def float_args(inst) -> bool:
    return any(kind(o.type) == "float" for o in inst.ops)


def float_atomic_add(inst) -> str | None:
    """"fadd" / "fsub" for `atomicrmw fadd|fsub ptr p, <float> v` (it adds v into *p like a
    store of *p + v, whatever other threads do), else None."""
    if inst.opcode != "opaque" or not inst.flags or inst.flags[0] != "atomicrmw":
        return None
    words = [w for w in inst.raw.split() if w not in ("atomicrmw", "volatile")]
    if words and words[0] in ("fadd", "fsub") and len(inst.ops) == 2 and kind(inst.ops[1].type) == "float":
        return words[0]
    return None


def is_defined_call(inst, module) -> bool:
    if inst.opcode != "call":
        return False
    f = module.functions.get(inst.callee_name) if module is not None else None
    return f is not None and not f.is_declaration


def activity_analysis(fn, activity, module=None) -> ActivityInfo:
    """`activity`: an Activity (or its string) per parameter of fn."""
    act = ActivityInfo(module=module)
    insts = list(fn.instructions())
    for a, mode in zip(fn.params, activities(activity)):
        if mode is Activity.DUP:
            act.shadowed.add(id(a))
        elif mode is Activity.ACTIVE:
            act.varying.add(id(a))
            act.active_params.add(id(a))
    propagate_forward(insts, act)
    _backward(insts, act)
    return act


def differentiated(act: ActivityInfo, i) -> bool:
    """A call into module code that touches varying values or shadowed memory."""
    return is_defined_call(i, act.module) and \
        any(id(o) in act.varying or id(o) in act.shadowed for o in i.ops)


def call_activity(act: ActivityInfo, call, scalar_floats: bool = False,
                  scalar_pointers: bool = False) -> tuple:
    """The activity of a call's arguments, for a call into a function of the module that both
    modes differentiate as a function of its own (its split gradient, its forward version).

    Per argument: DUP for a pointer with a shadow, ACTIVE for a varying float, CONST otherwise.
    scalar_floats / scalar_pointers: a vector of floats / of pointers is CONST (forward mode
    refuses calls that pass varying vectors before it asks: transforms/forward/calls.py)."""
    out = []
    for o in call.ops:
        if (o.type.is_ptr if scalar_pointers else kind(o.type) == "ptr") and act.has_shadow(o):
            out.append(Activity.DUP)
        elif kind(o.type) == "float" and id(o) in act.varying and (o.type.is_float or not scalar_floats):
            out.append(Activity.ACTIVE)
        else:
            out.append(Activity.CONST)
    return tuple(out)


def propagate_forward(insts, act: ActivityInfo) -> None:
    """Grow the shadowed and varying sets along the instructions until nothing changes."""
    groups = handle_groups(insts)   # the calls yielding one handle's data share its shadow
    changed = True
    while changed:
        changed = False
        for i in insts:
            if id(i) in groups and id(i) not in act.shadowed and \
                    any(id(s) in act.shadowed for s in groups[id(i)]):
                act.shadowed.update(id(s) for s in groups[id(i)])
                changed = True
            if i.opcode == "store" and (id(i.ops[0]) in act.varying and kind(i.ops[0].type) == "float"
                                        or id(i.ops[0]) in act.shadowed):
                changed |= _shadow_all(act, _alloca_roots(i.ops[1]))
            obj = getter_object(i)
            if (i.opcode == "load" and kind(i.type) == "ptr" and id(i.ops[0]) in act.shadowed
                    or obj is not None and id(obj) in act.shadowed) and id(i) not in act.shadowed:
                act.shadowed.add(id(i))
                changed = True
            if i.opcode == "call" and lookup_blas(i.callee_name) is not None and \
                    any(id(o) in act.shadowed for o in i.ops):
                outs = lookup_blas(i.callee_name).shadowed(i)
                changed |= _shadow_all(act, [r for o in outs for r in _alloca_roots(o)])
            pair = copy_in_operands(i)
            if pair is not None and id(pair[1]) in act.shadowed:
                changed |= _shadow_all(act, _container_slots(pair[0]))
            pair = copy_out_operands(i)
            if pair is not None and id(pair[0]) in act.shadowed:
                changed |= _shadow_all(act, _alloca_roots(pair[1]))
            if i.opcode == "call" and lookup_parallel(i.callee_name) is not None:
                changed |= _launch_shadows(i, insts, act)
            changed |= _shadow_all(act, _local_memory_reached(i, act))
            if i.opcode == "call" and differentiated(act, i):
                changed |= _shadow_all(act, [r for o in i.ops if kind(o.type) == "ptr" for r in _alloca_roots(o)])
            if kind(i.type) == "ptr" and i.opcode in SHADOW_OPS and id(i) not in act.shadowed:
                srcs = i.ops[1:] if i.opcode == "select" else (i.ops if i.opcode == "phi" else i.ops[:1])
                if any(id(s) in act.shadowed for s in srcs):
                    act.shadowed.add(id(i))
                    changed = True
            if i.opcode in ("phi", "select") and id(i) in act.shadowed:
                # local memory merged with shadowed memory gets a (zeroed) shadow of its own
                changed |= _shadow_all(act, _alloca_roots(i))
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


def _launch_shadows(call, insts, act: ActivityInfo) -> bool:
    """A parallel-for launch whose arguments hold shadowed memory may write differentiable data
    into the local memory of any of them (rules/parallel.py)."""
    passed = passed_pointers(call, insts)
    if not any(id(p) in act.shadowed for p in passed):
        return False
    return _shadow_all(act, [r for p in passed for r in _alloca_roots(p)])


def _shadow_all(act: ActivityInfo, values) -> bool:
    """Give each of `values` a shadow; whether one had none."""
    new = [v for v in values if id(v) not in act.shadowed]
    act.shadowed.update(id(v) for v in new)
    return bool(new)
def _local_memory_reached(i, act: ActivityInfo) -> list:
    """Local memory that instruction i makes differentiable, beyond a store of varying data:
    - a copy of shadowed memory (`x.copy()`, `np.copy`, a slice's copy: memcpy, memmove);
    - varying data stored through a pointer loaded from local memory (an array's struct kept on
      the stack, as a host's reshape does): that memory holds a pointer with a shadow;
    - a pointer into a local allocation stored into shadowed memory: the allocation, so that
      what is loaded back there has a shadow to accumulate into."""
    if i.opcode == "call" and (i.callee_name or "").startswith(COPIES) and id(i.ops[1]) in act.shadowed:
        return _alloca_roots(i.ops[0])
    if i.opcode != "store" or id(i.ops[0]) in act.shadowed:
        return []
    v, p = i.ops
    if kind(v.type) == "float" and id(v) in act.varying:
        return [a for r in roots(p) if isinstance(r, Instruction) and r.opcode == "load"
                and id(r) not in act.shadowed for a in _alloca_roots(r.ops[0]) if a.opcode == "alloca"]
    if kind(v.type) == "ptr" and id(p) in act.shadowed:
        return [r for r in _alloca_roots(v) if r.opcode == "call"]
    return []


def _container_slots(obj) -> list:
    """An object that receives shadowed items (rules/effects.py, register_copy_in), and the local
    memory its pointer is loaded from (the slot its constructor filled): they get shadows."""
    out = [obj]
    for r in roots(obj):
        if isinstance(r, Instruction) and r.opcode == "load":
            out += [r] + _alloca_roots(r.ops[0])
    return out


def _const_memory(p, act: ActivityInfo) -> bool:
    """p points only into Const parameters' memory. A pointer there has a shadow when it also
    feeds a phi or select with shadowed memory (a stand-in, transforms/common/stand_in.py), but what it
    loads is constant: storing differentiable data into a Const parameter is refused
    (check_constant_stores)."""
    rs = roots(p)
    return bool(rs) and all(isinstance(r, Argument) and id(r) not in act.shadowed for r in rs)


def _alloca_roots(p) -> list:
    """The local memory p may point into: allocas and allocations made by the function."""
    return [r for r in roots(p) if isinstance(r, Instruction) and
            (r.opcode == "alloca" or r.opcode == "call" and allocation_size(r) is not None)]


def _backward(insts, act: ActivityInfo) -> None:
    changed = True
    while changed:
        changed = False
        for i in reversed(insts):
            if i.opcode == "store" and id(i.ops[1]) in act.shadowed:
                targets = [i.ops[0]]
            elif float_atomic_add(i) and id(i.ops[0]) in act.shadowed:
                targets = [i.ops[1]]
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


def check_constant_stores(fn, act: ActivityInfo, locate) -> None:
    """Refuse active data stored into memory without a shadow (Enzyme's 'constant memory is
    stored to a differentiable variable')."""
    for i in fn.instructions():
        const = _const_param_written(i, act)
        if const is not None:
            raise ConstantMemoryError(const, format_instruction(i), locate(i))
        if float_atomic_add(i):
            ptr, v = i.ops
        elif i.opcode == "store":
            v, ptr = i.ops
        else:
            continue
        if id(ptr) in act.shadowed:
            continue
        if kind(v.type) == "float" and id(v) in act.varying:
            rs = roots(ptr)
            param = next((r.index for r in rs if isinstance(r, Argument)), None)
            if param is None:
                raise UnsupportedError("active data is stored into memory that has no shadow",
                                       format_instruction(i), locate(i))
            raise ConstantMemoryError(param, format_instruction(i), locate(i))


def check_handle_stores(fn, act: ActivityInfo, locate, failing=frozenset()) -> None:
    """Refuse the handle of an allocation with an element destructor whose data has a shadow (a
    list of arrays) stored into memory without a shadow (another list: a list of lists): the
    data asked of the handle loaded back would have no shadow, a silent zero. Stores into
    parameters' memory and in `failing` blocks are not checked (check_pointer_stores)."""
    insts = list(fn.instructions())
    shadowed = {id(handle_of(i)) for i in insts if id(i) in act.shadowed and handle_of(i) is not None}
    for i in insts:
        if i.opcode != "store" or i.block in failing:
            continue
        v, p = i.ops
        if id(v) in shadowed and element_dtor_arg(v) is not None and id(p) not in act.shadowed \
                and not all(isinstance(r, Argument) for r in roots(p)):
            raise UnsupportedError("a list holding differentiable data is kept in memory that has no "
                                   "shadow (a list of lists)", format_instruction(i), locate(i))


def check_pointer_stores(fn, act: ActivityInfo, locate, failing=frozenset()) -> None:
    """Refuse a pointer into differentiable memory stored into memory that has no shadow and
    that the function did not allocate (a host's list payload from an allocator that is not
    registered): a pointer loaded back from there has no shadow, so what is read through it
    would get no derivative, a silent zero. Stores into parameters' memory (a return slot, an
    exception slot: handed to the caller) and in `failing` blocks (only failing returns follow)
    are not checked."""
    for i in fn.instructions():
        if i.opcode != "store" or kind(i.ops[0].type) != "ptr" or i.block in failing:
            continue
        v, p = i.ops
        if id(v) in act.shadowed and id(p) not in act.shadowed and not _const_memory(v, act) \
                and not all(isinstance(r, Argument) for r in roots(p)):
            raise UnsupportedError("a pointer into differentiable memory is stored into memory that "
                                   "has no shadow", format_instruction(i), locate(i))


def _const_param_written(i, act: ActivityInfo):
    """A Const parameter that `i` may write differentiable data into through a pointer that
    also reaches shadowed memory (`p = x if c else a`; the loads of x elsewhere would not see
    the derivative), or None."""
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


def check_integer_views(fn, act: ActivityInfo, locate) -> None:
    """Refuse reading differentiable float memory as integers (a bit-level view of a float): the
    integer would carry the float's value with no derivative, a silent zero."""
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
        if any(id(r) in float_roots and not (isinstance(r, Instruction) and r.opcode == "alloca")
               for r in rs):
            raise UnsupportedError("differentiable float data is read as an integer (a bit-level "
                                   "view of a float)", format_instruction(i), locate(i))


_INTEGER_STEPS = {"trunc", "zext", "sext", "lshr", "ashr", "shl", "and", "or", "xor", "add", "sub",
                  "extractvalue", "insertvalue", "phi", "select", "freeze", "call"}


def check_float_bits(fn, act: ActivityInfo, locate) -> None:
    """Refuse a differentiable float whose bits go through integer operations and come back as a
    float that reaches an output (a shuffle of a float's halves that no pass made a float
    shuffle, bit manipulation): the integers carry no derivative, a silent zero. Forward mode
    refuses the integer operation itself."""
    users: dict = {}
    for i in fn.instructions():
        for o in i.ops:
            users.setdefault(id(o), []).append(i)
    for i in fn.instructions():
        if i.opcode != "bitcast" or kind(i.type) != "int" or kind(i.ops[0].type) != "float" or \
                id(i.ops[0]) not in act.varying:
            continue
        seen, todo = {id(i)}, [i]
        while todo:
            for u in users.get(id(todo.pop()), []):
                if u.opcode == "bitcast" and kind(u.type) == "float" and id(u) in act.useful:
                    raise UnsupportedError("the bits of differentiable float data go through "
                                           "integer operations and back to a float: the "
                                           "derivative would be lost", format_instruction(i),
                                           locate(i))
                if u.opcode in _INTEGER_STEPS and kind(u.type) != "float" and id(u) not in seen:
                    seen.add(id(u))
                    todo.append(u)


def print_activity(fn, activity) -> str:
    """Each named value of fn: active, shadowed (a pointer with a shadow) or const."""
    act = activity_analysis(fn, activity)
    out = []
    for i in fn.instructions():
        if i.name:
            tag = "active" if act.is_active(i) else ("shadowed" if act.has_shadow(i) else "const")
            out.append(f"%{i.name}: {tag}")
    return "\n".join(out)
