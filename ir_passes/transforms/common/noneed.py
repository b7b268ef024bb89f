"""Parameters whose primal contents the caller does not need (Enzyme's DUP_NONEED).

For such a "dup" parameter only the gradient matters: the forward sweep may skip its stores into
that memory, and LLVM then deletes the arithmetic that only fed them (y = x*x + sin(x) needs no
sin once y is not written; the reverse sweep needs cos). A store is skipped only when nothing in
the function may read the memory back, so every value the gradient uses is still the primal's:
- no load, and no call, may read through a pointer that may alias the parameter (analysis/alias.py);
- the parameter's pointers do not escape: not stored as data, not converted to integers.
Otherwise the parameter's stores all stay, and its contents are computed as for "dup".
"""
from __future__ import annotations

from ...ir.values import Global

POINTER_ARITHMETIC = ("getelementptr", "bitcast", "addrspacecast", "phi", "select", "icmp")


def unneeded_stores(fn, alias, no_need) -> list:
    """The stores of `fn` the forward sweep may skip: those into the memory of parameters
    `no_need` (indices) that nothing reads back."""
    targets = [fn.params[i] for i in sorted(no_need)]
    if not targets:
        return []
    blocked: set = set()
    candidates = []                            # (store, roots of its address)
    for inst in fn.instructions():
        for k, op in enumerate(inst.ops):
            if not op.type.is_ptr or inst.opcode in POINTER_ARITHMETIC:
                continue
            rs = alias.roots(op)
            if inst.opcode == "store" and k == 1:
                candidates.append((inst, rs))
                continue
            reads = inst.opcode in ("load", "call", "invoke")
            for t in targets:
                if any(_may_reach(alias, r, t, reads) for r in rs):
                    blocked.add(id(t))
    free = [t for t in targets if id(t) not in blocked]
    return [s for s, rs in candidates if rs and all(any(r is t for t in free) for r in rs)]


def _may_reach(alias, r, t, reads) -> bool:
    """May root r let the code read t (a load or call through it), or is it t escaping (stored
    as data, converted to an integer)? Module globals are never a caller's array."""
    if isinstance(r, Global):
        return False
    return alias.may_alias_roots(r, t) if reads else r is t


def drop(fwd, stores) -> None:
    """Remove the forward sweep's copies of `stores`."""
    for s in stores:
        c = fwd.vmap.get(s)
        if c is not None and c.block is not None and c in c.block.instructions:
            c.block.instructions.remove(c)
