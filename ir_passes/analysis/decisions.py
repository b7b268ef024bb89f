"""Which decisions of a function depend on the values of its differentiated inputs, and what
keeps NaN from flowing through its float arithmetic.

A sparsity pattern found by running the function once (tangent lanes seeded with NaN, one input
element each: NaN survives every product, even by zero) is the pattern of the instructions that
run for that input. It holds for every input only when what runs, and on which memory, does not
depend on the inputs' values. A value *depends on the inputs* when it is an "active" parameter,
a load from memory a "dup" parameter reaches (its initial contents and what the function stores
there), a load from memory into which such a value was stored, or any operation on such a value
(integer ones too: `fptosi`, `fcmp`). A *decision* is such a value used as:

- the condition of a conditional branch, a switch or a select (not a branch whose other ways
  end only in a failing return: a run that succeeds takes the one way);
- an index of a getelementptr or an address (`inttoptr`);
- an operand of a rule that picks one operand's derivative (min, max);
- an argument of a call the analysis cannot see into (a declared function with no derivative
  rule: a BLAS routine may skip products by zero).

Calls of functions defined in the module are analysed with the dependence of their arguments.

*Blockers* are what makes the NaN run itself unreliable: fast-math flags that let LLVM assume no
NaN or infinity (`nnan`, `ninf`, `fast`; the function attribute "no-nans-fp-math"), and a float's
bits read as an integer. Then no pattern is found at all.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.instructions import Instruction
from ..ir.printer import format_instruction
from ..ir.values import Argument
from ..options import Activity, activities
from ..rules.effects import allocation_size, is_math, writes_nothing
from ..rules.registry import intrinsic_key, lookup
from .forward_activity import failing_blocks
from .types import kind, roots, slot

PICKS = {"llvm.minnum", "llvm.maxnum"}      # rules whose derivative goes to the chosen operand
NO_NAN_FLAGS = {"nnan", "ninf", "fast"}
NO_NAN_ATTRS = ('"no-nans-fp-math"="true"', '"no-infs-fp-math"="true"', '"unsafe-fp-math"="true"')
COPIES = ("llvm.memcpy", "llvm.memmove")
QUIET = ("llvm.memset", "llvm.lifetime", "llvm.assume", "llvm.expect", "llvm.invariant",
         "llvm.prefetch", "llvm.dbg")     # read no value of their pointer's memory
MAX_DEPTH = 8


@dataclass
class Decisions:
    """`decisions` and `blockers`: (instruction text, reason) each."""
    decisions: list = field(default_factory=list)
    blockers: list = field(default_factory=list)

    @property
    def input_specific(self) -> bool:
        return bool(self.decisions)


def decisions(module, fn_name: str, activity, ignore=frozenset()) -> Decisions:
    """The decisions and blockers of `fn_name` and the module functions it calls; `activity`:
    an Activity (or its string) per parameter. `ignore`: ids of instructions of `fn_name` not
    to count as decisions (the merges transforms/pattern_union.py makes)."""
    return _analyse(module, fn_name, activity, ignore)[0]


def dependent(module, fn_name: str, activity) -> set:
    """The ids of `fn_name`'s values that depend on the inputs' values."""
    return _analyse(module, fn_name, activity, frozenset())[1]


def _analyse(module, fn_name, activity, ignore):
    out = Decisions()
    for item in module.items:
        if isinstance(item, str) and any(a in item for a in NO_NAN_ATTRS):
            out.blockers.append((item.strip()[:80], "fast-math attributes: NaN may be assumed away"))
    fn = module.functions[fn_name]
    tainted = {id(p) for p, a in zip(fn.params, activities(activity)) if a is Activity.ACTIVE}
    memory = {id(p) for p, a in zip(fn.params, activities(activity)) if a is Activity.DUP}
    walk = _Walk(module, out, 0, ignore)
    walk.function(fn, tainted, memory)
    return out, tainted


class _Walk:
    def __init__(self, module, out: Decisions, depth: int, ignore=frozenset()):
        self.module, self.out, self.depth, self.ignore = module, out, depth, ignore

    def function(self, fn, tainted: set, memory: set) -> tuple:
        """Grow the dependent values (`tainted`, ids) and the roots of dependent memory
        (`memory`) to a fixed point, then record decisions. Returns (return value depends,
        memory ids grown)."""
        insts = list(fn.instructions())
        state = _State(tainted, memory, stack_slots(fn))
        changed = True
        while changed:
            changed = False
            for i in insts:
                changed |= self.step(i, state)
        failing = failing_blocks(fn)
        for i in insts:
            if i.block not in failing:
                self.check(i, state, failing)
        returns = any(i.opcode == "ret" and i.ops and state.depends(i.ops[0]) for i in insts)
        return returns, state.memory

    def step(self, i, s) -> bool:
        if i.opcode == "store":     # a dependent value, or a pointer into dependent memory
            v = i.ops[0]
            if s.depends(v):
                return s.mark_memory(i.ops[1])
            return v.type.is_ptr and s.reads_dependent(v) and s.mark_holder(i.ops[1])
        if i.opcode == "load":
            if s.reads_dependent(i.ops[0]):
                return s.mark(i)
            return i.type.is_ptr and s.holds(i.ops[0]) and s.mark_pointee(i)
        if i.opcode == "call":
            return self.call(i, s)
        if i.opcode == "select":       # the condition is a decision; the value is an operand's
            return any(s.depends(o) for o in i.ops[1:]) and s.mark(i)
        return any(s.depends(o) for o in i.ops) and s.mark(i)

    def call(self, i, s) -> bool:
        name = i.callee_name
        pointers = [o for o in i.ops if o.type.is_ptr]
        if name.startswith(COPIES):
            if s.reads_dependent(i.ops[1]):
                return s.mark_memory(i.ops[0])
            return s.holds(i.ops[1]) and s.mark_holder(i.ops[0])
        rule = lookup(name)
        callee = self.module.functions.get(name)
        direct = rule is not None and rule.inactive and (callee is None or callee.is_declaration)
        # a declared function that never carries derivatives reads only the memory its
        # arguments point at (a host's reshape: shapes and strides); others may follow pointers
        reads = any(s.depends(o) for o in i.ops) or any(
            s.reads_dependent(p) or not direct and s.holds(p) for p in pointers)
        if not reads or name.startswith(QUIET):
            return False
        changed = s.mark(i) if kind(i.type) != "void" else False
        if direct and writes_nothing(name):     # reference counts
            return changed
        if callee is not None and not callee.is_declaration and self.depth < MAX_DEPTH:
            inner = {id(p) for p, o in zip(callee.params, i.ops) if s.depends(o)}
            mem = {id(p) for p, o in zip(callee.params, i.ops) if o.type.is_ptr and s.touches(o)}
            _, grown = _Walk(self.module, Decisions(), self.depth + 1).function(callee, inner, mem)
            for p, o in zip(callee.params, i.ops):
                if id(p) in grown and o.type.is_ptr:
                    changed |= s.mark_memory(o)
            return changed
        for p in pointers:
            changed |= s.mark_memory(p)
        return changed

    def check(self, i, s, failing) -> None:
        text = format_instruction(i)
        if NO_NAN_FLAGS & set(i.flags):
            self.out.blockers.append((text, "fast-math flags: NaN may be assumed away"))
        if i.opcode == "bitcast" and kind(i.ops[0].type) == "float" and kind(i.type) == "int" \
                and s.depends(i.ops[0]):
            self.out.blockers.append((text, "a float's bits are read as an integer"))
        reason = self.decision(i, s)
        if reason and i.opcode in ("br", "switch") and \
                sum(t not in failing for t in i.successors()) <= 1:
            reason = ""           # the other ways only fail (a division's zero check)
        if reason and id(i) not in self.ignore:
            self.out.decisions.append((text, reason))

    def decision(self, i, s) -> str:
        op = i.opcode
        if op in ("br", "switch") and i.ops and s.depends(i.ops[0]):
            return "a branch on the inputs' values"
        if op == "select" and s.depends(i.ops[0]):
            return "a select on the inputs' values"
        if op == "getelementptr" and any(s.depends(o) for o in i.ops[1:]):
            return "an address computed from the inputs' values"
        if op == "inttoptr" and s.depends(i.ops[0]):
            return "an address computed from the inputs' values"
        if op != "call" or not any(s.depends(o) or o.type.is_ptr and s.touches(o)
                                   for o in i.ops):
            return ""
        name = i.callee_name
        if intrinsic_key(name) in PICKS or (lookup(name) and lookup(name).key in PICKS):
            return "a min or max of the inputs' values"
        callee = self.module.functions.get(name)
        if callee is not None and not callee.is_declaration:
            if self.depth + 1 >= MAX_DEPTH:
                return "calls nested too deep to analyse"
            inner = Decisions()
            tainted = {id(p) for p, o in zip(callee.params, i.ops) if s.depends(o)}
            mem = {id(p) for p, o in zip(callee.params, i.ops) if o.type.is_ptr and s.touches(o)}
            _Walk(self.module, inner, self.depth + 1).function(callee, tainted, mem)
            self.out.blockers += inner.blockers
            return f"in @{name}: {inner.decisions[0][1]}" if inner.decisions else ""
        if is_math(name) or name.startswith(COPIES + QUIET):
            return ""
        rule = lookup(name)
        if rule is not None and rule.inactive:
            return ""
        return f"a call of @{name or 'a pointer'} reads the inputs' values"


class _State:
    def __init__(self, tainted: set, memory: set, slots: dict):
        self.tainted, self.memory, self.slots = tainted, memory, slots
        self.holders: set = set()   # roots of memory holding pointers into dependent memory
        self.unknown = False      # a dependent value stored where the roots are not known

    def depends(self, v) -> bool:
        return id(v) in self.tainted

    def mark(self, v) -> bool:
        if id(v) in self.tainted:
            return False
        self.tainted.add(id(v))
        return True

    def mark_memory(self, p) -> bool:
        changed = False
        for r in self.roots(p):
            if not _known_root(r) and not self.unknown:
                self.unknown = changed = True
            if id(r) not in self.memory:
                self.memory.add(id(r))
                changed = True
        return changed

    def mark_holder(self, p) -> bool:
        rs = self.roots(p)
        if not all(_known_root(r) for r in rs):
            return self.mark_memory(p)
        new = {id(r) for r in rs} - self.holders - self.memory
        self.holders |= new
        return bool(new)

    def mark_pointee(self, v) -> bool:
        """v, a pointer loaded from a holder, points into dependent memory."""
        if id(v) in self.memory:
            return False
        self.memory.add(id(v))
        return True

    def holds(self, p) -> bool:
        return any(id(r) in self.holders for r in self.roots(p))

    def touches(self, p) -> bool:
        return self.reads_dependent(p) or self.holds(p)

    def reads_dependent(self, p) -> bool:
        return any(id(r) in self.memory or id(r) in self.tainted or self.unknown and not _local(r)
                   for r in self.roots(p))

    def roots(self, p) -> list:
        """roots(p), a pointer loaded from a stack slot replaced by the pointers stored there."""
        out, work, seen = [], list(roots(p)), set()
        while work:
            r = work.pop()
            if id(r) in seen:
                continue
            seen.add(id(r))
            stored = self.slots.get(id(r))
            if stored is None:
                out.append(r)
            else:
                for v in stored:
                    work += roots(v)
        return out


def stack_slots(fn) -> dict:
    """For each load of a pointer from a constant offset of an alloca, the pointers stored at
    that offset: when the alloca's address is used only by constant-offset geps, loads, stores
    to it and calls that store no pointers (memset and the like; declared functions that never
    carry derivatives: reference counts, a host's reshape of shapes and strides). A host keeps
    an array's fields there (the data pointer of a reshaped view)."""
    stored, loads, escaped = {}, [], set()
    for i in fn.instructions():
        for k, o in enumerate(i.ops):
            if not o.type.is_ptr:
                continue
            place = slot(o)
            if place is None:
                escaped |= {id(r) for r in roots(o)}
                continue
            base, offset = place
            if not (isinstance(base, Instruction) and base.opcode == "alloca"):
                continue
            if i.opcode == "load":
                loads.append((i, base, offset))
            elif i.opcode == "store" and k == 1 and kind(i.ops[0].type) in ("ptr", "int", "float"):
                stored.setdefault((id(base), offset), []).append(i.ops[0])
            elif i.opcode in ("getelementptr", "bitcast") or i.opcode == "call" and _stores_no_pointer(i):
                continue
            else:
                escaped.add(id(base))
    out = {}
    for i, b, off in loads:
        values = stored.get((id(b), off), [])
        if i.type.is_ptr and id(b) not in escaped and all(v.type.is_ptr for v in values):
            out[id(i)] = values
    return out


def _stores_no_pointer(call) -> bool:
    name = call.callee_name
    rule = lookup(name)
    return name.startswith(QUIET) or rule is not None and rule.inactive


def _local(r) -> bool:
    return isinstance(r, Instruction) and (r.opcode == "alloca" or allocation_size(r) is not None)


def _known_root(r) -> bool:
    return isinstance(r, Argument) or _local(r)


def print_decisions(module, fn_name: str, activity) -> str:
    """Each decision and blocker of a function: `decision: <instruction>  ; <reason>`."""
    result = decisions(module, fn_name, activity)
    lines = [f"decision: {t}  ; {r}" for t, r in result.decisions]
    lines += [f"blocker: {t}  ; {r}" for t, r in result.blockers]
    return "\n".join(lines) if lines else "none"
