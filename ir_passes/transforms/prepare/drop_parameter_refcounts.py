"""Drop the reference counting of handles the caller passed in, before AD (the pass
drop-parameter-refcounts).

A host with reference-counted memory (rules/effects.py: an allocator's `retain` / `release`)
passes arrays as borrowed handles: the caller holds a reference for the whole call, and the
callee's own retains and releases of the handle come in pairs. When a handle parameter is used
only by those calls (directly, or through phis and selects that mix it only with other such
parameters), nothing can see its count change: no release can reach zero while the caller's
reference lives, and the handle is never stored, returned or passed on, so no reference outlives
the call. The calls then do nothing and go: in a time loop that multiplies matrices, a dozen
atomic additions per step in the forward sweep (an RNN's gemv wrappers retain and release W, h,
U and x around each product). Handles of the kernel's own allocations keep theirs (their last
release frees the memory).
"""
from __future__ import annotations

from ...ir.instructions import Instruction
from ...ir.values import Argument, Constant
from ...rules.effects import ALLOCATORS


def refcount_functions() -> tuple:
    """(retains, releases): the registered reference-counting functions."""
    return ({a.retain for a in ALLOCATORS.values() if a.retain},
            {a.release for a in ALLOCATORS.values() if a.release})


def drop_parameter_refcounts(fn, refcounts=None) -> int:
    """Remove the retains and releases of `fn`'s handle parameters that nothing else uses
    (`refcounts`: (retains, releases), default the registered ones); return how many calls went.
    A phi or select that mixes such a parameter with another handle and only feeds releases
    takes null from the parameter instead (a release accepts null: rules/effects.py)."""
    retains, releases = refcount_functions() if refcounts is None else refcounts
    names = set(retains) | set(releases)
    if not names:
        return 0
    users: dict = {}
    for inst in fn.instructions():
        for o in inst.ops:
            users.setdefault(id(o), []).append(inst)

    def refcount(u, among) -> bool:
        return u.opcode == "call" and (u.callee_name or "") in among and len(u.ops) == 1

    dropped = 0
    for group in _groups(fn, users):
        ids = {id(v) for v in group}
        calls, mixed = [], []
        for v, u in ((v, u) for v in group for u in users.get(id(v), [])):
            if refcount(u, names):
                calls.append(u)
            elif u.opcode in ("phi", "select") and id(u) not in ids and \
                    (u.opcode == "phi" or u.ops[0] is not v) and \
                    all(refcount(w, releases) for w in users.get(id(u), [])):
                mixed.append((u, v))
            elif id(u) not in ids:      # stored, returned, passed on
                calls, mixed = [], []
                break
        for u, v in mixed:
            u.ops = [Constant(v.type, "null") if o is v else o for o in u.ops]
        for c in calls:
            c.block.instructions.remove(c)
            dropped += 1
    return dropped


def _groups(fn, users) -> list:
    """Pointer parameters joined with the phis and selects that take only them: each group a
    list whose retains and releases go together or stay together."""
    member = {id(a): a for a in fn.params if isinstance(a, Argument) and a.type.is_ptr}
    changed = True
    while changed:       # phis / selects whose pointer inputs are all members
        changed = False
        for inst in fn.instructions():
            if id(inst) in member or inst.opcode not in ("phi", "select"):
                continue
            ins = inst.ops if inst.opcode == "phi" else inst.ops[1:]
            if inst.type.is_ptr and all(id(o) in member for o in ins):
                member[id(inst)] = inst
                changed = True
    parent = {k: k for k in member}

    def find(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k
    for v in member.values():
        if isinstance(v, Instruction):
            ins = v.ops if v.opcode == "phi" else v.ops[1:]
            for o in ins:
                parent[find(id(o))] = find(id(v))
    groups: dict = {}
    for k, v in member.items():
        groups.setdefault(find(k), []).append(v)
    return list(groups.values())
