"""Memory a parallel loop body indexes by the thread id: sums and per-thread scratch.

A body (parallel_body.py) reaches memory through addresses computed from `tid` in two ways:

- a sum reduction's partial result (`s += ...` in a prange; `acc[t] += x[i]`): every store
  there is the value loaded from there plus other terms, and every load feeds only such a sum.
  Its adjoint is the same in every partial result, so the reverse sweep may reverse any
  iteration on any thread (it re-reads the thread id);
- per-thread scratch (`buf[get_thread_id(), j]` written, then read, by an iteration): every
  load reads a location the running task wrote before, at the same address (`covered`). No
  value then flows into a task through the scratch from another task, so the task's reverse
  sweep may use whatever row its thread id picks: the task writes, reads and consumes its
  row's shadow like a serial loop's scratch, and leaves it as it found it.

Anything else (`acc[t] *= x[i]`, a read of a row before the task wrote it) carries a value
from one task to another on the same thread: it depends on the schedule, and is refused.
`check_thread_memory` decides, per object addressed by the thread (the roots of the address).
"""
from __future__ import annotations

from ...analysis.dominators import dominators
from ...analysis.loops import loop_info
from ...analysis.types import roots
from ...ir.instructions import Instruction
from ...ir.values import ConstInt
from . import diagnostics


def check_thread_memory(module, fn, tid, depends) -> list:
    """Refuse a float access to memory addressed by `tid` (`depends`: the ids of values computed
    from it) that is neither a sum reduction's nor per-thread scratch's (module docstring);
    returns the scratch's roots (values of fn), with an access of each."""
    groups: dict = {}
    for inst in fn.instructions():
        p = _float_address(inst)
        if p is not None and id(p) in depends:
            groups.setdefault(frozenset(id(r) for r in roots(p)), []).append(inst)
    if not groups:
        return []
    where, scratch = _Where(fn), []
    for accesses in groups.values():
        if _is_sum(fn, accesses):
            continue
        scratch.append((roots(_float_address(accesses[0])), accesses[0]))
        stores = [i for i in accesses if i.opcode == "store"]
        loads = [i for i in accesses if i.opcode == "load"]
        stray = next((ld for ld in loads if not covered(ld, stores, where)), None)
        if stray is not None:
            raise diagnostics.unsupported(
                module, "a parallel loop's reduction variable (or memory indexed by the thread) "
                "is read before the iteration wrote it, other than by its own `+=` (as "
                "`p *= x[i]`, or a scratch row read before it is written)", stray,
                "only sums `s += ...` are reversed on many threads, and per-thread scratch "
                "(`buf[get_thread_id(), j]`) must be written by an iteration before it reads "
                "it; differentiate a serial loop otherwise")
    return scratch


def _float_address(inst):
    """The address a float load or store accesses, else None."""
    if inst.opcode == "store" and inst.ops[0].type.is_float:
        return inst.ops[1]
    if inst.opcode == "load" and inst.type.is_float:
        return inst.ops[0]
    return None


def _is_sum(fn, accesses) -> bool:
    """Are these a sum reduction's accesses (module docstring)?"""
    for inst in accesses:
        if inst.opcode == "store" and not _sum_of_load(inst.ops[0], inst.ops[1], set()):
            return False
        if inst.opcode == "load" and not all(_in_sum(u, fn) for u in _users(fn, inst)):
            return False
    return True


def _users(fn, v):
    return [i for i in fn.instructions() if any(o is v for o in i.ops)]


def _sum_of_load(v, address, seen) -> bool:
    """Is v = load(address) + terms, through fadd / fsub (first operand) / phi?"""
    if id(v) in seen:
        return True
    seen.add(id(v))
    op = getattr(v, "opcode", "")
    if op == "load":
        return v.ops[0] is address
    if op == "phi":
        return all(_sum_of_load(o, address, seen) for o in v.ops)
    if op == "fadd":
        return any(_sum_of_load(o, address, set(seen)) for o in v.ops)
    if op == "fsub":
        return _sum_of_load(v.ops[0], address, seen)
    return False


def _in_sum(u, fn) -> bool:
    """A use of a partial result inside its sum: a phi, fadd, fsub's first operand or the store
    back (checked by the store), recursively."""
    if u.opcode == "store":
        return True
    if u.opcode not in ("phi", "fadd", "fsub"):
        return False
    return all(_in_sum(w, fn) for w in _users(fn, u) if w is not u) if u.opcode != "phi" else \
        all(w.opcode in ("phi", "fadd", "fsub", "store") for w in _users(fn, u))


class _Where:
    """Dominators and loops of the body."""

    def __init__(self, fn):
        self.dom = dominators(fn)
        self.loops = loop_info(fn)
        self.preds = fn.predecessors()

    def before(self, a, b) -> bool:
        """Does every path to instruction b pass instruction a first?"""
        if a.block is b.block:
            block = a.block.instructions
            return block.index(a) < block.index(b)
        return self.dom.dominates(a.block, b.block)

    def holds(self, loop, block) -> bool:
        return loop is None or loop.contains(block)


def covered(load, stores, where) -> bool:
    """Did the task write the location `load` reads, before it, at the same address? A store
    that runs before the load (dominates it) with an equal address, either in a loop that holds
    the load, or in a counted loop over j = 0, 1, ..., n - 1 (the store in each of its
    iterations) beside the load's loop over the same range, the address equal with the one
    index for the other."""
    for s in stores:
        if not where.before(s, load):
            continue
        a, b = where.loops.loop_of(s.block), where.loops.loop_of(load.block)
        if where.holds(a, load.block) and \
                _same(s.ops[1], load.ops[0], {}, _stable(where, s, load)):
            return True
        if a is not None and b is not None and a is not b and a.parent is b.parent:
            ja, jb = _counted(a), _counted(b)
            if ja and jb and _same(ja[1], jb[1], {}, _stable(where, s, load)) and \
                    _every_iteration(where, s, a, load) and \
                    _same(s.ops[1], load.ops[0], {id(ja[0]): jb[0]}, _stable(where, s, load)):
                return True
    return any(_row_written(s, load, where) for s in stores)


def _row_written(s, load, where) -> bool:
    """Did store s write the whole row `load` reads from, before it? s runs in every iteration
    of a counted loop over j = 0, ..., n - 1 at `row + j`, row = `gep base, x * n` (a row of n
    elements: `buf[t, j]` for j in range(buf.shape[1])); the load's address is `row` plus any
    indices (an index outside the row is out of bounds, undefined in the kernel itself). The
    loop runs before the load: s dominates it, or the only way around the loop is a branch that
    skips it when n < 1 (an empty row). Or, whatever the row's length, s dominates the load and
    the load reads `row + c` for a constant c among the loop's j (`buf[t, 0]` after
    `for j in range(3): buf[t, j] = ...`, the loop unrolled or not)."""
    a = where.loops.loop_of(s.block)
    counted = _counted(a) if a is not None else None
    if counted is None or not _every_iteration(where, s, a, load):
        return False
    j, n = counted
    stable = _stable(where, s, load)
    p = s.ops[1]
    if not (_gep1(p) and p.ops[1] is j and _gep1(p.ops[0])):
        return False
    row, q = p.ops[0], load.ops[0]
    if a.contains(load.block):
        return False        # the loop must have run to its end
    before = where.before(s, load)
    if not (before or _skipped_only_when_empty(a, n, load, where)):
        return False
    offset = row.ops[1]
    whole = getattr(offset, "opcode", "") == "mul" and \
        any(_same(o, n, {}, stable) for o in offset.ops)
    first = _same(q, row, {}, stable) or \
        _gep1(q) and q.source_type == p.source_type and _same(q.ops[0], row, {}, stable) and \
        isinstance(q.ops[1], ConstInt) and isinstance(n, ConstInt) and 0 <= q.ops[1].value < n.value
    if first and (before or whole):
        return True         # `row + c` for a constant c the loop's j took (0: the loop ran)
    if not whole:
        return False
    while _gep1(q) and not _same(q, row, {}, stable):
        q = q.ops[0]
    return _same(q, row, {}, stable) and q is not load.ops[0]


def _gep1(p) -> bool:
    """`getelementptr T, base, index` (one index)."""
    return getattr(p, "opcode", "") == "getelementptr" and len(p.ops) == 2


def _skipped_only_when_empty(loop, n, load, where) -> bool:
    """Is the loop's preheader entered from a block G that dominates `load` and whose branch
    goes around the loop only when n < 1 (`icmp slt n, 1` / `icmp sle n, 0` true, or `icmp sgt
    n, 0` / `icmp sge n, 1` false)?"""
    preds = [b for b in where.preds[loop.header] if not loop.contains(b)]
    if len(preds) != 1:
        return False
    into, guard = loop.header, preds[0]
    if len(guard.terminator.targets) == 1 and len(where.preds[guard]) == 1:
        into, guard = guard, where.preds[guard][0]      # through a preheader
    term = guard.terminator
    if term.opcode != "br" or len(term.targets) != 2 or into not in term.targets or \
            not where.dom.dominates(guard, load.block):
        return False
    cond = term.ops[0]
    if getattr(cond, "opcode", "") != "icmp" or cond.ops[0] is not n or \
            not isinstance(cond.ops[1], ConstInt):
        return False
    skip_if_true = term.targets.index(into) == 1
    c, pred = cond.ops[1].value, cond.pred
    empty_if_true = (pred, c) in (("slt", 1), ("sle", 0))
    empty_if_false = (pred, c) in (("sgt", 0), ("sge", 1))
    return (skip_if_true and empty_if_true) or (not skip_if_true and empty_if_false)


def _stable(where, s, load):
    """Does value v (an operand of both addresses) hold the same value at s and at load? Yes
    when the innermost loop of its definition holds both (the same iteration of it)."""
    def stable(v):
        if not isinstance(v, Instruction):
            return True
        lp = where.loops.loop_of(v.block)
        return lp is None or lp.contains(s.block) and lp.contains(load.block)
    return stable


_LEAVES = ("phi", "load", "call", "alloca", "atomicrmw", "cmpxchg", "extractvalue")


def _same(a, b, mapped, stable) -> bool:
    """Are a and b the same value: a is b (and stable), a is mapped to b, or the same
    computation of such operands?"""
    if id(a) in mapped:
        return mapped[id(a)] is b
    if a is b:
        return stable(a)
    if isinstance(a, ConstInt) and isinstance(b, ConstInt):
        return a.type == b.type and a.value == b.value
    if not (isinstance(a, Instruction) and isinstance(b, Instruction)) or \
            a.opcode in _LEAVES or a.opcode != b.opcode or a.type != b.type or \
            a.pred != b.pred or len(a.ops) != len(b.ops) or \
            getattr(a, "source_type", None) != getattr(b, "source_type", None):
        return False
    return all(_same(x, y, mapped, stable) for x, y in zip(a.ops, b.ops))


def _counted(loop):
    """(j, n) for a loop whose header has j = phi [0, outside], [j + 1, latch] and whose latch
    leaves on `br (icmp eq/sge/uge j + 1, n)` (either operand order, or slt/ult with the targets
    swapped): j takes values among 0, ..., n - 1, and each of them when the loop leaves only
    there (`_every_iteration`); else None."""
    if len(loop.latches) != 1:
        return None
    latch = loop.latches[0]
    term = latch.terminator
    if term.opcode != "br" or len(term.targets) != 2:
        return None
    cond = term.ops[0]
    if getattr(cond, "opcode", "") != "icmp":
        return None
    leave_if_true = not loop.contains(term.targets[0])
    for phi in loop.header.phis():
        if len(phi.ops) != 2 or latch not in phi.blocks:
            continue
        step = phi.incoming(latch)
        start = next(v for v, blk in zip(phi.ops, phi.blocks) if blk is not latch)
        if not (isinstance(start, ConstInt) and start.value == 0 and
                getattr(step, "opcode", "") == "add" and any(o is phi for o in step.ops) and
                any(isinstance(o, ConstInt) and o.value == 1 for o in step.ops)):
            continue
        x, y = cond.ops
        pred = cond.pred
        if y is step:
            x, y, pred = y, x, _SWAP.get(pred, pred)
        if x is not step:
            continue
        if (pred in ("eq", "sge", "uge") and leave_if_true) or \
                (pred in ("ne", "slt", "ult") and not leave_if_true):
            return phi, y
    return None


_SWAP = {"sgt": "slt", "slt": "sgt", "sge": "sle", "sle": "sge",
         "ugt": "ult", "ult": "ugt", "uge": "ule", "ule": "uge"}


def _every_iteration(where, s, loop, load) -> bool:
    """Does store s run in every iteration of `loop` (its block dominates the latch) whenever
    `load` runs after it? Exits other than the latch's must not lead to the load (a body's
    raise leaves that way and returns)."""
    if where.loops.loop_of(s.block) is not loop or \
            not where.dom.dominates(s.block, loop.latches[0]):
        return False
    latch = loop.latches[0]
    work = [t for b in loop.blocks if b is not latch for t in b.successors()
            if not loop.contains(t)]
    seen = set()
    while work:
        b = work.pop()
        if b is load.block:
            return False
        if b not in seen and b is not loop.header:
            seen.add(b)
            work.extend(b.successors())
    return True
