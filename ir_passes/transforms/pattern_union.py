"""The union of both arms of a decision, for finding a sparsity pattern that holds for every input.

A pattern found by running forward mode with NaN tangents is the pattern of the code that runs
for that input; a branch on the inputs' values (analysis/decisions.py) picks which. This pass
rewrites a copy of the function so that its tangents carry the dependence of *every* way each
such decision can go, while the primal values stay those of the way taken:

- a branch on dependent values whose two arms are single-entry regions meeting at one join
  block (an if/else or an if without else) runs both arms, one after the other; a value the
  join's phi picked becomes `select(c, a, b) + 0*a + 0*b` (the primal: the arm taken; the
  tangent: NaN when either arm's is). An arm starting at a loop header gets a block of its own
  before it; arms meeting where other ways meet too get a join of their own (inner branches
  first);
- a float store in an arm becomes `store select(taken, v, old) + 0*v + 0*old` (`old` loaded
  just before): the location keeps what it holds on the way not taken, and its tangent unites
  the stored value's and the old one's, for either order the arms run in;
- a select on dependent values becomes `select(c, a, b) + 0*a + 0*b`, a min or max
  `max(a, b) + 0*a + 0*b`;
- a branch on dependent values to a block that only fails (a division's zero check) goes to
  its other way: an arm run on the way not taken may divide by zero.

The arms may load (an address that does not depend on the inputs' values is one that some
input reads on that way) but call only math functions and store only floats. The function is
meant for forward mode with every product guarded (the strong zero): an arm run on the way not
taken may compute inf or NaN, and a guarded product of a zero tangent by it stays zero, so
which tangents come out NaN depends on the code's structure only. `union_arms` returns the ids
of the instructions that merge; decisions(..., ignore=those) lists the decisions left (loops
whose trip count depends on the inputs, addresses computed from them, ...). With none left,
the pattern of one run holds for every input of these shapes and these other arguments.
"""
from __future__ import annotations

from ..analysis.decisions import PICKS, dependent
from ..analysis.dominators import reverse_postorder
from ..analysis.forward_activity import failing_blocks
from ..analysis.types import kind
from ..ir import types as T
from ..ir.instructions import Instruction
from ..ir.module import Block
from ..ir.parser import parse_module
from ..ir.printer import print_module
from ..ir.values import ConstFloat
from ..rules.effects import is_math
from ..rules.registry import intrinsic_key, lookup

SPECULABLE = {"fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "add", "sub", "mul", "and", "or",
              "xor", "shl", "lshr", "ashr", "icmp", "fcmp", "select", "phi", "getelementptr",
              "load", "store", "br", "extractvalue", "insertvalue", "extractelement",
              "insertelement", "shufflevector", "freeze", "call"} | {
              "fptrunc", "fpext", "sitofp", "uitofp", "fptosi", "fptoui", "trunc", "zext", "sext",
              "bitcast", "ptrtoint"}
DIVISIONS = {"udiv", "sdiv", "urem", "srem"}


def union_arms(module, fn_name: str, activity) -> set:
    """Rewrite `fn_name` in place (see the module docstring); the ids of the merging
    instructions, for decisions(..., ignore=...)."""
    fn = module.functions[fn_name]
    made: set = set()
    names = iter(range(1 << 30))
    while True:
        deps = dependent(module, fn_name, activity)
        failing = failing_blocks(fn)
        _never_fail(fn, deps, failing)
        order = {b: k for k, b in enumerate(reverse_postorder(fn))}
        done = False
        for b in sorted(order, key=order.get, reverse=True):     # inner branches first
            t = b.terminator
            if t is not None and t.opcode == "br" and t.ops and id(t.ops[0]) in deps and \
                    id(t) not in made and _merge_branch(fn, b, order, deps, made, names):
                done = True
                break
        if not done:
            break
    deps = dependent(module, fn_name, activity)
    for i in list(fn.instructions()):
        if id(i) in made:
            continue
        if i.opcode == "select" and id(i.ops[0]) in deps and _is_float(i.type):
            _unite_after(i, i.ops[1], i.ops[2], made, names)
        elif i.opcode == "call" and _is_float(i.type) and len(i.ops) == 2 and _picks(i):
            _unite_after(i, i.ops[0], i.ops[1], made, names)
    return made


def _picks(i) -> bool:
    name = i.callee_name
    rule = lookup(name)
    return intrinsic_key(name) in PICKS or (rule is not None and rule.key in PICKS)


def _is_float(t) -> bool:
    return isinstance(t, T.FloatType)


def _never_fail(fn, deps, failing) -> None:
    for b in fn.blocks:
        t = b.terminator
        if t is None or t.opcode != "br" or not t.ops or id(t.ops[0]) not in deps:
            continue
        ok = [s for s in t.targets if s not in failing]
        if len(ok) == 1 and len(t.targets) == 2:
            _goto(b, t, ok[0])


def _goto(block, term, target) -> None:
    """Make `block` end in `br target`, dropping it from the phis of the successors it leaves."""
    for s in term.successors():
        if s is not target:
            for p in s.phis():
                keep = [k for k, pb in enumerate(p.blocks) if pb is not block]
                p.ops = [p.ops[k] for k in keep]
                p.blocks = [p.blocks[k] for k in keep]
    _goto_keep(block, term, target)


def _region(entry, join, order, deps) -> list | None:
    """The blocks from `entry` up to `join`, if they form a single-entry region whose only
    exit is one edge into `join` and whose code can run on the way not taken; else None."""
    if entry is join:
        return []
    blocks, work = [entry], [entry]
    while work:
        b = work.pop()
        for s in b.successors():
            if s is not join and s not in blocks:
                if order.get(s, -1) < order[entry]:
                    return None
                blocks.append(s)
                work.append(s)
    preds = entry.function.predecessors()
    if len(preds[entry]) != 1 or any(p not in blocks for b in blocks[1:] for p in preds[b]):
        return None
    exits = [b for b in blocks if join in b.successors()]
    if len(exits) != 1 or any(not _speculable(i, deps) for b in blocks for i in b.instructions):
        return None
    return blocks


def _speculable(i, deps) -> bool:
    if i.opcode in DIVISIONS:       # a divisor some input divides by on this way
        return id(i.ops[1]) not in deps
    if i.opcode not in SPECULABLE or i.volatile:
        return False
    if i.opcode == "store":
        return _is_float(i.ops[0].type)
    if i.opcode == "call":      # scalar math only: no memory, no other effect
        return is_math(i.callee_name) and kind(i.type) == "float" and \
            not any(o.type.is_ptr for o in i.ops)
    return True


def _merge_branch(fn, b, order, deps, made, names) -> bool:
    term = b.terminator
    cond, (yes, no) = term.ops[0], term.targets
    join = _join(yes, no, order) if yes is not no else None
    if join is None:
        return False
    preds = fn.predecessors()
    for s in (yes, no):
        if s is not join and len(preds[s]) > 1:     # a loop header: an entry block of its own
            _split(fn, b, s, names)
    yes, no = term.targets
    order = {x: k for k, x in enumerate(reverse_postorder(fn))}
    arms = [_region(yes, join, order, deps), _region(no, join, order, deps)]
    if any(a is None for a in arms) or set(arms[0]) & set(arms[1]):
        return False
    ends = [_end(a, join, b) for a in arms]
    preds = fn.predecessors()[join]
    if ends[0] is ends[1] or any(e not in preds for e in ends):
        return False
    if len(preds) > 2:          # other ways meet there too: a join of the arms' own
        join = _split_join(fn, join, ends, names)
    for taken, arm in zip((True, False), arms):
        for blk in arm:
            for s in [i for i in blk.instructions if i.opcode == "store"]:
                _guard_store(s, cond, taken, made, names)
    first, second = (0, 1) if arms[0] else (1, 0)
    last = ends[second] if arms[second] else ends[first]
    phis = join.phis()
    values = [(p, p.incoming(ends[0]), p.incoming(ends[1])) for p in phis]
    _goto_keep(b, term, (arms[first] or [join])[0])
    if arms[second]:
        ends[first].terminator.replace_successor(join, arms[second][0])
        for p in arms[second][0].phis():
            p.blocks = [ends[first] if pb is b else pb for pb in p.blocks]
    for p, a, v in values:
        merged = _select_plus(last, cond, a, v, made, names)
        p.ops, p.blocks = [merged], [last]
    made.add(id(term))
    return True


def _block_before(fn, at, names) -> Block:
    blk = Block(f"pu.b{next(names)}", fn)
    fn.blocks.insert(fn.blocks.index(at), blk)
    return blk


def _split(fn, a, b, names) -> Block:
    """A block of its own on the edge a -> b."""
    mid = _block_before(fn, b, names)
    mid.append(Instruction("br", T.void, [], targets=[b]))
    a.terminator.replace_successor(b, mid)
    for p in b.phis():
        p.blocks = [mid if pb is a else pb for pb in p.blocks]
    return mid


def _split_join(fn, join, ends, names) -> Block:
    """A block where only the ways from `ends` meet, before `join`; its phis take what
    `join`'s took from them."""
    mid = _block_before(fn, join, names)
    for p in join.phis():
        q = mid.append(_new("phi", p.type, [p.incoming(e) for e in ends], names, blocks=list(ends)))
        keep = [k for k, pb in enumerate(p.blocks) if pb not in ends]
        p.ops = [p.ops[k] for k in keep] + [q]
        p.blocks = [p.blocks[k] for k in keep] + [mid]
    mid.append(Instruction("br", T.void, [], targets=[join]))
    for e in ends:
        e.terminator.replace_successor(join, mid)
    return mid


def _goto_keep(block, term, target) -> None:
    term.ops, term.targets, term.meta = [], [target], ""      # no branch weights


def _join(yes, no, order):
    """The first block (in reverse postorder) both ways reach without going back."""
    def reach(s):
        seen, work = {s}, [s]
        while work:
            for n in work.pop().successors():
                if n not in seen and order.get(n, -1) > order[s]:
                    seen.add(n)
                    work.append(n)
        return seen
    common = reach(yes) & reach(no)
    return min(common, key=order.get) if common else None


def _end(arm, join, b):
    return next(x for x in arm if join in x.successors()) if arm else b


def _new(opcode, t, ops, names, **fields) -> Instruction:
    return Instruction(opcode, t, ops, name=f"pu.{next(names)}", **fields)


def _select_plus(block, cond, a, b, made, names, before=None):
    """select(cond, a, b) (+ 0*a + 0*b for floats) before `before` (else the terminator)."""
    at = block.instructions.index(before) if before is not None else len(block.instructions) - 1
    t = a.type
    new = [_new("select", t, [cond, a, b], names)]
    if _is_float(t):
        zero = ConstFloat(t, 0.0)
        za = _new("fmul", t, [zero, a], names)
        zb = _new("fmul", t, [zero, b], names)
        s = _new("fadd", t, [za, zb], names)
        new += [za, zb, s, _new("fadd", t, [new[0], s], names)]
    for k, i in enumerate(new):
        block.insert(at + k, i)
        made.add(id(i))
    return new[-1]


def _guard_store(store, cond, taken, made, names) -> None:
    v, p = store.ops
    blk = store.block
    old = _new("load", v.type, [p], names, align=store.align)
    blk.insert(blk.instructions.index(store), old)
    a, b = (v, old) if taken else (old, v)
    store.ops = [_select_plus(blk, cond, a, b, made, names, before=store), p]


def _unite_after(i, a, b, made, names) -> None:
    """Uses of `i` take i + 0*a + 0*b instead."""
    blk = i.block
    at = blk.instructions.index(i) + 1
    while blk.instructions[at].opcode == "phi":
        at += 1
    t, zero = i.type, ConstFloat(i.type, 0.0)
    za = _new("fmul", t, [zero, a], names)
    zb = _new("fmul", t, [zero, b], names)
    s = _new("fadd", t, [za, zb], names)
    out = _new("fadd", t, [i, s], names)
    for u in i.block.function.instructions():
        u.ops = [out if o is i else o for o in u.ops]
    out.ops = [i, s]
    for k, x in enumerate((za, zb, s, out)):
        blk.insert(at + k, x)
        made.add(id(x))
    made.add(id(i))




def pattern_text(text: str, fn_name: str, activity) -> str:
    """union_arms on module text; the new text."""
    module = parse_module(text)
    union_arms(module, fn_name, activity)
    return print_module(module)


__all__ = ["pattern_text", "union_arms"]
