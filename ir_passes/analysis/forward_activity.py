"""Activity for forward mode: analysis/activity.py's shadowed and varying sets, extended.

Forward mode needs a tangent for every *varying* float (usefulness does not matter: there is no
reverse sweep to prune) and a shadow for every pointer into memory whose tangents must be kept.
On top of activity_analysis it adds the facts that pointers kept in memory need:

- a pointer with a shadow stored into memory makes that memory hold pointers: a local root
  (alloca, allocation, reallocation, or a pointer loaded from memory) becomes shadowed, and its
  shadow holds the stored pointer's shadow; conversely local memory whose pointer is stored into
  shadowed memory gets a shadow (another function may write differentiable data into it);
- a pointer loaded from shadowed memory that holds pointers has a shadow: the pointer loaded from
  the shadow memory at the same place;
- `realloc(old, n)` is shadowed exactly when `old` is (its shadow is realloc'd alongside);
- `memcpy`/`memmove` from shadowed memory into local memory makes that memory shadowed (also
  when it is reached through a pointer loaded from local memory: a checkpoint's snapshot slot);
- a call into a function of the module that takes shadowed memory may return a varying float.

Blocks from which only failing returns can be reached (rules/convention.py's success codes: an
exception being raised) keep no tangents in memory: the function fails and its tangents are
discarded, so what they store (an exception's arguments, boxed into fresh memory whose pointer
goes to the caller's exception slot) needs no shadow.

Where the rules need a shadow that cannot exist (a Const argument receiving a pointer into
differentiable memory), ForwardActivityError names the instruction.
"""
from __future__ import annotations

from ..errors import UnsupportedError
from ..ir.instructions import Instruction
from ..ir.values import Argument, ConstInt, Constant, Global
from ..rules.convention import success_codes
from ..rules.effects import handle_groups, realloc_operand, returns_new_memory
from .activity import ActivityInfo, activity_analysis, call_activity, differentiated, propagate_forward
from .types import kind, roots

RETURNS = "returns varying"   # this analysis's memo in module.facts


def forward_activity(fn, activity, module=None, describe=None, locate=None) -> ActivityInfo:
    """Activity for forward mode; a refusal names an instruction by `describe` and its source
    (file, line) by `locate`."""
    act = activity_analysis(fn, activity, module)   # act.ptr_holders: ids of roots whose memory
    insts = list(fn.instructions())                 # holds pointers with shadows
    failing = failing_blocks(fn)
    dropped = {id(i) for i in insts if i.block in failing}
    act.shadowed -= dropped     # no shadow allocations, no tangents on a path that fails
    act.varying -= dropped
    insts = [i for i in insts if i.block not in failing]
    while _extend(insts, act, describe or (lambda i: i.opcode), locate or (lambda i: None)):
        propagate_forward(insts, act)
    return act


def _local_root(r) -> bool:
    return isinstance(r, Instruction) and (r.opcode == "alloca" or
                                           r.opcode == "call" and returns_new_memory(r))


class _Extender:
    def __init__(self, act, describe, groups=None, locate=lambda i: None):
        self.act, self.describe, self.locate, self.changed = act, describe, locate, False
        self.groups = groups or {}   # rules/effects.handle_groups: the calls yielding one handle's data
        self.journal = None     # (set, id) added since soft_require began, to undo on failure

    def _add(self, table, key) -> None:
        table.add(key)
        self.changed = True
        if self.journal is not None:
            self.journal.append((table, key))

    def mark(self, v) -> None:
        if id(v) not in self.act.shadowed:
            self._add(self.act.shadowed, id(v))

    def hold(self, p) -> None:
        """The memory p points into holds pointers with shadows."""
        for r in roots(p):
            for m in self.groups.get(id(r), (r,)):
                if id(m) not in self.act.ptr_holders and not isinstance(m, Constant):
                    self._add(self.act.ptr_holders, id(m))

    def require(self, v, inst) -> None:
        """v must have a shadow: mark it and what its shadow is built from."""
        if isinstance(v, Constant) or id(v) in self.act.shadowed:
            return
        if isinstance(v, Argument):
            if self.journal is not None:
                return      # soft: a parameter merged with shadowed memory gets a stand-in shadow
            raise UnsupportedError("a pointer into differentiable memory is stored into memory that "
                                   "has no shadow (a Const argument)", self.describe(inst),
                                   self.locate(inst),
                                   "Pass that array as Duplicated(array, shadow).")
        op = v.opcode if isinstance(v, Instruction) else None
        if _local_root(v):
            self.mark(v)
        elif op in ("getelementptr", "bitcast", "addrspacecast"):
            self.mark(v)
            self.require(v.ops[0], inst)
        elif op in ("phi", "select"):
            self.mark(v)
            for o in (v.ops if op == "phi" else v.ops[1:]):
                self.require(o, inst)
        elif op == "load" and kind(v.type) == "ptr":
            self.mark(v)
            self.require(v.ops[0], inst)
            self.hold(v.ops[0])
        elif op == "call" and realloc_operand(v) is not None:
            self.mark(v)
            self.require(realloc_operand(v), inst)
        else:
            raise UnsupportedError(f"a pointer into differentiable memory comes from `{op}`",
                                   self.describe(v) if op else v.ref(),
                                   self.locate(v if op else inst))

    def soft_require(self, v, inst) -> None:
        """require(v) where v can have a shadow; a parameter, a global or a pointer from an
        unknown source stays its own shadow (forward_memory.store)."""
        if isinstance(v, (Constant, Argument, Global)) or id(v) in self.act.shadowed:
            return
        outer, changed = self.journal, self.changed
        self.journal = []
        try:
            self.require(v, inst)
        except UnsupportedError:
            # all or nothing: a phi of pointers that cannot all have shadows (an allocation
            # handle, a pointer from an unknown call) gets none
            for table, key in self.journal:
                table.discard(key)
            self.journal, self.changed = outer, changed
            return
        if outer is not None:
            outer.extend(self.journal)
        self.journal = outer

    def visit(self, i) -> None:
        act, op = self.act, i.opcode
        if op == "store" and kind(i.ops[0].type) == "ptr" and id(i.ops[0]) in act.shadowed:
            self.require(i.ops[1], i)
            self.hold(i.ops[1])
        elif op == "store" and kind(i.ops[0].type) == "ptr" and id(i.ops[1]) in act.shadowed:
            # what is loaded from shadowed memory has a shadow, so what is stored there needs one;
            # memory this code allocates may receive differentiable data elsewhere (a split
            # gradient's frame: allocated by the forward half, written by the reverse half);
            # a pointer into parameters without shadows only (a merge of their allocation handles) is
            # stored as its own shadow, as a parameter is
            if not all(isinstance(r, (Constant, Argument, Global)) and id(r) not in self.act.shadowed
                       for r in roots(i.ops[0])):
                self.soft_require(i.ops[0], i)
        elif op == "store" and kind(i.ops[0].type) == "float" and id(i.ops[0]) in act.varying \
                and id(i.ops[1]) not in act.shadowed \
                and all(not isinstance(r, (Argument, Global)) for r in roots(i.ops[1])):
            self.require(i.ops[1], i)   # local memory (a tape, a buffer) receives varying data
        elif op == "load" and kind(i.type) == "ptr" and id(i.ops[0]) in act.shadowed:
            if id(i) not in act.shadowed and any(id(r) in act.ptr_holders for r in roots(i.ops[0])):
                self.mark(i)
        elif op == "call":
            old = realloc_operand(i)
            if old is not None:
                if id(i) in act.shadowed:
                    self.require(old, i)
                elif id(old) in act.shadowed:
                    self.mark(i)
            if i.callee_name.startswith(("llvm.memcpy", "llvm.memmove")) and id(i.ops[1]) in act.shadowed:
                self.soft_require(i.ops[0], i)   # local memory, or reached through a loaded pointer
            if differentiated(act, i) and kind(i.type) == "float" and id(i) not in act.varying \
                    and call_returns_varying(act.module, i.callee_name,
                                             call_activity(act, i, scalar_floats=True)):
                act.varying.add(id(i))
                self.changed = True
        if op == "load" and id(i) in act.shadowed:
            self.require(i.ops[0], i)
            self.hold(i.ops[0])
        if op in ("phi", "select") and kind(i.type) == "ptr" and id(i) in act.shadowed:
            for o in (i.ops if op == "phi" else i.ops[1:]):
                self.soft_require(o, i)   # local memory merged with shadowed memory gets a shadow


class ReturnsVarying:
    """Memo of call_returns_varying for one module: {(callee, activity): bool}, and whether the
    fixed point is being computed (then inner queries answer from the table)."""

    def __init__(self):
        self.table: dict = {}
        self.busy = False


def call_returns_varying(module, callee: str, activity: tuple) -> bool:
    """Does `callee`, called with this activity, return a varying float? A least fixed point over
    the (function, activity) pairs met, so recursion is answered exactly."""
    memo = module.facts.setdefault(RETURNS, ReturnsVarying())
    table = memo.table
    key = (callee, activity)
    if key in table:
        return table[key]
    table[key] = False
    if memo.busy:
        return False            # the outer fixed point computes it
    memo.busy = True
    try:
        changed = True
        while changed:
            changed = False
            for k in list(table):
                size = len(table)
                v = _returns_varying(module, *k)
                if v != table[k] or len(table) != size:
                    table[k] = v
                    changed = True
    finally:
        memo.busy = False
    return table[key]


def _returns_varying(module, callee, activity) -> bool:
    fn = module.functions[callee]
    act = forward_activity(fn, list(activity), module)
    return any(i.opcode == "ret" and i.ops and kind(i.ops[0].type) == "float" and id(i.ops[0]) in act.varying
               for i in fn.instructions())


def _extend(insts, act, describe, locate) -> bool:
    ext = _Extender(act, describe, handle_groups(insts), locate)
    for i in insts:
        ext.visit(i)
    return ext.changed


def failing_blocks(fn) -> set:
    """Blocks from which every path ends in a failing return: one whose status is a constant that
    is not a success code (rules/convention.py), directly or through the phi of a shared return
    block. Empty when no success codes are registered."""
    codes = success_codes()
    if codes is None:
        return set()
    preds = fn.predecessors()
    work, keep = [], set()      # keep: shared return blocks that some success passes through
    for b in fn.blocks:
        t = b.terminator
        if t is None or t.opcode != "ret":
            continue
        status = t.ops[0] if t.ops else None
        if isinstance(status, Instruction) and status.opcode == "phi" and status.block is b:
            ok = [p for v, p in zip(status.ops, status.blocks) if not _fails(v, codes)]
            work += ok
            if ok:
                keep.add(b)
        elif not _fails(status, codes):
            work.append(b)
    reach = set(work) | keep
    while work:
        for p in preds[work.pop()]:
            if p not in reach:
                reach.add(p)
                work.append(p)
    return {b for b in fn.blocks if b not in reach}


def _fails(status, codes) -> bool:
    return isinstance(status, ConstInt) and status.value not in codes


__all__ = ["forward_activity", "print_forward_activity"]


def print_forward_activity(fn, activity) -> str:
    """Each named value of fn: varying (it has tangents), shadowed (a pointer with shadows) or
    const, as forward mode sees them."""
    act = forward_activity(fn, activity, None)
    out = []
    for i in fn.instructions():
        if i.name:
            tag = ("varying" if id(i) in act.varying and kind(i.type) == "float" else
                   "shadowed" if act.has_shadow(i) else "const")
            out.append(f"%{i.name}: {tag}")
    return "\n".join(out)
