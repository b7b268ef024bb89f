"""Loads of a temporary that an earlier loop filled read back what it stored: recompute that.

    for j in range(d): xc[j] = x[i, j] - m[k, j]        # loop A stores xc[j]
    for j in range(d): q[j] = D[k, j] * xc[j]           # loop B loads xc[j]

When later code overwrites `xc` (the next i, k), the reverse sweep cannot load `xc[j]` again and
tapes it, once per iteration of B. But the load reads the value A stored at iteration j, and that
value can be computed again at the load from `x` and `m`, which nothing writes. Run before AD,
this replaces the load by a copy of the stored expression with A's index replaced by the load's:
the primal computes the same value bit for bit, and the tape loses the temporary (GMM's
`xcentered`, twice 20 MB).

A load is forwarded from store S in loop A when
- S writes `base[iA]` and is the only write anywhere in the function that may alias `base`;
- iA is an induction variable of A from 0 by 1, S runs in every iteration of A, and A's exact
  trip count is known (tripcount.exact_trip) and A leaves through its latch only;
- the load reads `base[iB]` outside A, where iB is an induction variable from 0 by 1 of a loop B
  around the load whose exact trip count has the same shape (so iB takes the values iA took);
- A's exit block dominates the load, and every loop around A is around the load too (the load
  runs after A has finished, in the same iteration of their common loops);
- the stored value is built from A's index, values that dominate the load, arithmetic, casts,
  address computations, pure float intrinsics and loads of memory no instruction may write.
"""
from __future__ import annotations

from ...analysis.alias import alias_analysis
from ...analysis.dominators import dominators
from ...analysis.loops import loop_info
from ...analysis.tripcount import exact_trip, induction
from ...ir.instructions import Instruction
from ...ir.values import Constant, ConstInt
from ...rules.registry import lookup

PURE = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "add", "sub", "mul", "shl", "and", "or",
        "xor", "sext", "zext", "trunc", "sitofp", "uitofp", "fptosi", "fpext", "fptrunc",
        "getelementptr", "select", "icmp", "fcmp", "bitcast"}
MAX_COPY = 24        # instructions copied per load, at most


def forward_loop_stores(fn, noalias_params: bool = False) -> int:
    """Replace loads of loop-filled temporaries by the stored expression; return how many."""
    info = loop_info(fn)
    if not info.loops:
        return 0
    dom = dominators(fn)
    alias = alias_analysis(fn, noalias_params)
    fills = {}
    for inst in fn.instructions():
        if inst.opcode == "store":
            fill = _fill(inst, info, dom, alias)
            if fill is not None:
                fills.setdefault(id(fill.base), []).append(fill)
    replaced = {}
    for load in [i for i in fn.instructions() if i.opcode == "load" and not i.volatile]:
        addr = _element(load.ops[0], load.type)
        if addr is None or id(addr[0]) not in fills:
            continue
        fill = next((f for f in fills[id(addr[0])] if f.forwards(load, addr[1], info, dom, alias)),
                    None)
        if fill is not None:
            replaced[id(load)] = fill.copy_at(load, addr[1])
            load.block.instructions.remove(load)
    if replaced:
        for i in fn.instructions():
            i.ops = [replaced.get(id(o), o) for o in i.ops]
    return len(replaced)


def _element(p, t):
    """(base, index) when p is `getelementptr t, ptr base, i64 index`."""
    if isinstance(p, Instruction) and p.opcode == "getelementptr" and len(p.ops) == 2 and \
            p.source_type == t:
        return p.ops[0], p.ops[1]
    return None


def _from_zero_by_one(v, loop):
    iv = induction(v, loop)
    if iv is None or iv[0] is not v or iv[1] != 1:
        return False
    init = [x for x, b in zip(v.ops, v.blocks) if b not in loop.blocks]
    return isinstance(init[0], ConstInt) and init[0].value == 0


def _same(a, b) -> bool:
    return a is b or isinstance(a, ConstInt) and isinstance(b, ConstInt) and a.value == b.value


def _same_trip(t, u) -> bool:
    return _same(t.init, u.init) and _same(t.bound, u.bound) and t.step == u.step and \
        t.on_phi == u.on_phi and t.strict == u.strict


class _Fill:
    def __init__(self, store, loop, trip, index, exit_block):
        self.store, self.loop, self.trip, self.index, self.exit = store, loop, trip, index, exit_block
        self.base = store.ops[1].ops[0]
        self.tree = None      # the stored expression's instructions in A, defs first;
                              # False: it cannot be copied (computed on first use)

    def forwards(self, load, index, info, dom, alias) -> bool:
        blk = load.block
        if blk in self.loop.blocks or not dom.dominates(self.exit, blk):
            return False
        around = info.loop_of(blk)
        outer = around.ancestors() if around else []
        if any(lp not in outer for lp in self.loop.ancestors()[1:]):
            return False
        loop_b = next((lp for lp in outer if lp is not self.loop and _from_zero_by_one(index, lp)),
                      None)
        if loop_b is None:
            return False
        trip = exact_trip(loop_b, set())
        if trip is None or not _same_trip(trip, self.trip):
            return False
        # A must leave through its latch only when the load follows
        for b in self.loop.blocks:
            if b is not self.loop.latches[0] and any(
                    s not in self.loop.blocks and (s is blk or alias.reachable(s, blk))
                    for s in b.successors()):
                return False
        if self.tree is None:
            tree = _expression(self.store.ops[0], self.loop, self.index, alias)
            self.tree = False if tree is None else tree
        if self.tree is False:
            return False
        return all(_dominates(dom, alias, v, load) for v in _leaves(self.tree, self.store.ops[0],
                                                                    self.index))

    def copy_at(self, load, index):
        """The stored expression computed again just before `load`, with `index` for A's."""
        blk = load.block
        at = blk.instructions.index(load)
        m = {id(self.index): index}
        for inst in self.tree:
            c = inst.copy()
            c.ops = [m.get(id(o), o) for o in inst.ops]
            c.name = ""
            c.meta = ""       # alias scopes and other hints belong to the original's place
            c.block = blk
            blk.instructions.insert(at, c)
            at += 1
            m[id(inst)] = c
        v = self.store.ops[0]
        return m.get(id(v), v)


def _fill(store, info, dom, alias):
    addr = _element(store.ops[1], store.ops[0].type)
    lp = info.loop_of(store.block)
    if addr is None or lp is None or len(lp.latches) != 1 or store.volatile:
        return None
    base, index = addr
    if not _from_zero_by_one(index, lp) or not dom.dominates(store.block, lp.latches[0]):
        return None
    if getattr(base, "block", None) in lp.blocks:
        return None
    if alias.writes_to(store.ops[1]) != [store]:
        return None
    trip = exact_trip(lp, set())
    if trip is None:
        return None
    outside = [s for s in lp.latches[0].successors() if s not in lp.blocks]
    if len(outside) != 1:
        return None
    return _Fill(store, lp, trip, index, outside[0])


def _expression(v, loop, index, alias):
    """The instructions of `loop` that compute v, defs first; None when one may not be copied."""
    order, seen = [], set()

    def visit(x) -> bool:
        if not isinstance(x, Instruction) or x.block not in loop.blocks or x is index or id(x) in seen:
            return True
        seen.add(id(x))
        if len(seen) > MAX_COPY:
            return False
        if x.opcode == "load":
            if x.volatile or alias.writes_to(x.ops[0]):
                return False
        elif x.opcode == "call":
            rule = lookup(x.callee_name)
            if not (x.callee_name.startswith("llvm.") and rule is not None and rule.partials):
                return False
        elif x.opcode not in PURE:
            return False
        if not all(visit(o) for o in x.ops):
            return False
        order.append(x)
        return True
    return order if visit(v) else None


def _leaves(tree, value, index):
    """The values the copy reads from outside the expression."""
    inside = {id(i) for i in tree} | {id(index)}
    out = [o for i in tree for o in i.ops if id(o) not in inside]
    return out + ([value] if id(value) not in inside else [])


def _dominates(dom, alias, v, at) -> bool:
    if isinstance(v, Constant) or not isinstance(v, Instruction):
        return True
    if v.block is at.block:
        return alias.position(v) < alias.position(at)
    return dom.dominates(v.block, at.block)
