"""Integer copies of float data become float copies, before AD (the pass float-copies).

LLVM turns a small memcpy (one 8-byte element) into an integer load and store:

    store double %v, ptr %a          ; the element, written as a float
    %bits = load i64, ptr %a         ; the memcpy, as an integer
    store i64 %bits, ptr %b

Read as an integer, differentiable float data would lose its derivative (activity refuses it as
a bit-level view). When the integer is only stored (a copy), and the slot it reads (base object
and constant byte offset) is accessed otherwise only as one float type of the same width, the
load and its stores take that float type: the same bits move, and the derivative moves with them.
"""
from __future__ import annotations

from ...analysis.types import slot
from ...ir import types as T


def retype_float_copies(fn) -> int:
    """Give integer copies of float slots the float type; return how many loads changed."""
    insts = list(fn.instructions())
    users: dict = {}
    for i in insts:
        for o in i.ops:
            users.setdefault(id(o), []).append(i)
    copies = [i for i in insts if _integer_copy(i, users)]
    copied = {id(i) for i in copies}
    access: dict = {}       # slot -> types accessed there, integer copies left out
    for i in insts:
        if i.opcode not in ("load", "store") or id(i) in copied:
            continue
        if i.opcode == "store" and id(i.ops[0]) in copied:
            continue
        s = _key(i.ops[0] if i.opcode == "load" else i.ops[1])
        if s is not None:
            access.setdefault(s, set()).add(i.type if i.opcode == "load" else i.ops[0].type)
    count = 0
    for load in copies:
        types = access.get(_key(load.ops[0]), set())
        if len(types) != 1:
            continue
        (t,) = types
        if isinstance(t, T.FloatType) and T.size_of(t) == T.size_of(load.type):
            load.type = t
            count += 1
    return count


def _integer_copy(i, users) -> bool:
    """A load of an integer whose every user stores it (as the value, not the address)."""
    if i.opcode != "load" or not isinstance(i.type, T.IntType) or i.volatile:
        return False
    us = users.get(id(i), [])
    return bool(us) and all(u.opcode == "store" and u.ops[0] is i and u.ops[1] is not i
                            and not u.volatile for u in us)


def _key(p):
    s = slot(p)
    return None if s is None else (id(s[0]), s[1])
