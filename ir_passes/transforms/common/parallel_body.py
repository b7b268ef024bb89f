"""The loop body of a parallel-for as a function reverse mode can differentiate.

The launcher calls its body as `body(args, dims, steps, data)` (rules/parallel.py): the loop's
arrays arrive as pointers loaded from `args`. A copy of the body takes them as parameters of
their own, so that each gets its activity and the analyses see distinct objects:

    body'(args, dims, steps, data, tid, sched, a_1, ..., a_{n-1})

- `load ptr (args + 8j)`, 0 <= j < n, becomes `a_j` (`a_0` is `sched`, the task's schedule
  entries: memory of the launch's own, `noalias`);
- `load i64 (steps + 8j)`, 1 <= j < n, becomes 0: the launcher's convention (the launch
  functions pass those steps as 0 too);
- it returns an i32 status: 1 after a call to one of the launcher's `raise_calls`, else 0;
- a call of the runtime's thread id function (any of `thread_ids`, rules/parallel.py) becomes
  `tid` (truncated when the call returns a narrower integer), which the task passes in: each
  sweep asks the runtime again, so a reduction's partial results and a thread's scratch are the
  running thread's own.

`iterations` names what indexes an iteration for analysis/sharing.py: the induction variable
that starts at a schedule entry's first index. Memory indexed by `tid` must be a sum
reduction's partial results or per-thread scratch (`check_reductions`, thread_memory.py).
"""
from __future__ import annotations

from ...analysis.loops import loop_info
from ...analysis.sharing import Iterations
from ...ir import types as T
from ...ir.instructions import Instruction
from ...ir.parser import parse_module
from ...ir.module import Function
from ...ir.printer import format_function, ref_name
from ...ir.values import Argument, ConstInt
from . import diagnostics
from .atomics import atomic
from .thread_memory import check_thread_memory

ARGS, DIMS, STEPS, DATA, TID, SCHED = range(6)
NAME = "enzpy.parfor.body"


def make_body(module, wrapper: str, n: int, thread_ids, raise_calls=(),
              nonnegative: bool = False, one_entry: bool = False) -> str | None:
    """Add the copy of @wrapper (n arguments in `args`) described in the module docstring;
    returns its name. `thread_ids`: the names of calls to the thread id. `nonnegative`: the
    loop's index is never negative (the sign tests of negative-index wraparound on it fold
    away). `one_entry`: the copy runs only the first of its schedule entries (`run_once`), or
    None is returned when its loop over them is not of the usual form."""
    names = module.derived.setdefault("parallel body", {})
    key = (wrapper, nonnegative, one_entry)
    if key in names:
        return names[key]
    name = f"{NAME}.{len(names)}"
    text = format_function(module.functions[wrapper]).replace(
        f"@{ref_name(wrapper)}(", f"@{ref_name(name)}(", 1)
    fn = parse_module(text).functions[name]
    fn.prefix = "define internal"
    extra = [Argument(T.i64, "tid", "", TID), Argument(T.ptr, "sched", "noalias", SCHED)] + \
        [Argument(T.ptr, f"array.{j}", "", SCHED + j) for j in range(1, n)]
    fn.params = fn.params[:4] + extra
    replaced = {}
    for blk in fn.blocks:
        for k, inst in enumerate(list(blk.instructions)):
            new = _replacement(inst, fn, n, thread_ids)
            if isinstance(new, Instruction):        # a narrower thread id: trunc tid
                new.block = blk
                blk.instructions.insert(blk.instructions.index(inst), new)
            if new is not None:
                replaced[id(inst)] = new
    for blk in fn.blocks:
        blk.instructions = [i for i in blk.instructions if id(i) not in replaced]
        for inst in blk.instructions:
            inst.ops = [replaced.get(id(o), o) for o in inst.ops]
    if one_entry and not run_once(fn):
        names[key] = None
        return None
    _fold_zero_steps(fn)
    if nonnegative:
        _fold_sign_tests(fn)
    _drop_dead_geps(fn)
    _check_args_uses(module, fn)
    _return_status(module, fn, raise_calls)
    module.add_function(fn)
    names[key] = name
    return name


def run_once(fn) -> bool:
    """Make the loop over the task's schedule entries (the outermost loop, counting from 0 by 1)
    run its first iteration only: the latch leaves the loop and the header's phis take their
    entry values. False, and fn unchanged, when that loop is not of this form."""
    info = loop_info(fn)
    outer = [lp for lp in info.loops if lp.parent is None]
    if len(outer) != 1 or len(outer[0].latches) != 1:
        return False
    lp = outer[0]
    latch, header = lp.latches[0], lp.header
    term = latch.terminator
    outside = [t for t in term.successors() if t not in lp.blocks]
    preds = fn.predecessors()[header]
    if term.opcode != "br" or len(term.targets) != 2 or len(outside) != 1 or len(preds) != 2:
        return False
    counter = [p for p in header.phis() if _counts_from_zero(p, latch)]
    if len(counter) != 1 or not _indexes_schedule(fn, counter[0]):
        return False
    term.ops, term.targets = [], outside
    for phi in header.phis():
        value = next(v for v, b in zip(phi.ops, phi.blocks) if b is not latch)
        header.instructions.remove(phi)
        for inst in fn.instructions():
            inst.ops = [value if o is phi else o for o in inst.ops]
    return True


def _counts_from_zero(phi, latch) -> bool:
    """phi = [0, outside], [phi + 1, latch]."""
    if len(phi.ops) != 2 or phi.type != T.i64:
        return False
    start = next((v for v, b in zip(phi.ops, phi.blocks) if b is not latch), None)
    step = phi.incoming(latch) if latch in phi.blocks else None
    return isinstance(start, ConstInt) and start.value == 0 and \
        getattr(step, "opcode", "") == "add" and any(o is phi for o in step.ops) and \
        any(isinstance(o, ConstInt) and o.value == 1 for o in step.ops)


def _indexes_schedule(fn, counter) -> bool:
    """Is counter the schedule entry's number: `gep sched, counter * step`?"""
    sched = fn.params[SCHED]
    for i in fn.instructions():
        if i.opcode == "getelementptr" and len(i.ops) == 2 and i.ops[0] is sched:
            o = i.ops[1]
            if o is counter or getattr(o, "opcode", "") == "mul" and \
                    any(x is counter for x in o.ops):
                return True
    return False


def _replacement(inst, fn, n, thread_ids):
    if inst.opcode == "call" and not inst.ops and inst.callee_name in thread_ids:
        tid = fn.params[TID]
        return tid if inst.type == T.i64 else \
            Instruction("trunc", inst.type, [tid], name=f"{inst.name}.tid")
    if inst.opcode != "load":
        return None
    base, offset = _constant_offset(inst.ops[0])
    if offset is None or offset % 8 or not 0 <= offset // 8 < n:
        return None
    if base is fn.params[ARGS] and inst.type.is_ptr:
        return fn.params[SCHED + offset // 8]
    if base is fn.params[STEPS] and inst.type == T.i64 and offset:
        return ConstInt(T.i64, 0)
    return None


def _constant_offset(p):
    """(base, byte offset) of `gep base, const` or of a parameter itself; else (None, None)."""
    if isinstance(p, Argument):
        return p, 0
    if getattr(p, "opcode", "") == "getelementptr" and len(p.ops) == 2 and \
            isinstance(p.ops[1], ConstInt) and isinstance(p.ops[0], Argument):
        return p.ops[0], p.ops[1].value * T.size_of(p.source_type)
    return None, None


def _check_args_uses(module, fn) -> None:
    """Every read of `args` is one of the launcher's slots, now a parameter."""
    args = fn.params[ARGS]
    for inst in fn.instructions():
        if any(o is args for o in inst.ops):
            raise diagnostics.unsupported(
                module, "a parallel loop body reads its arguments in an unexpected way", inst)


def _return_status(module, fn, raise_calls) -> None:
    """`ret void` becomes `ret i32 1` on the paths after a call to one of `raise_calls`, else 0."""
    raising = [blk for blk in fn.blocks if any(i.opcode == "call" and i.callee_name in raise_calls
                                                for i in blk.instructions)]
    after = set()
    work = list(raising)
    while work:
        blk = work.pop()
        if blk not in after:
            after.add(blk)
            work.extend(blk.successors())
    preds = fn.predecessors()
    fn.ret_type = T.i32
    for blk in fn.blocks:
        term = blk.terminator
        if blk in after and blk not in raising and term.opcode != "ret" and \
                any(p not in after for p in preds[blk]):
            raise diagnostics.unsupported(module, "a parallel loop body goes on after it raised",
                                          term)
        if term.opcode != "ret":
            continue
        if blk not in after or blk in raising:
            term.ops = [ConstInt(T.i32, int(blk in raising))]
            continue
        phi = Instruction("phi", T.i32, [ConstInt(T.i32, int(p in after)) for p in preds[blk]],
                          name="raised", blocks=list(preds[blk]))
        blk.insert(0, phi)
        term.ops = [phi]


def _fold_zero_steps(fn) -> None:
    """`mul x, 0` is 0 and `gep p, 0` is p: an array's address no longer moves with the
    schedule entry (the analyses then see it as the parameter itself)."""
    changed = True
    while changed:
        changed = False
        new = {}
        for inst in fn.instructions():
            zero = [isinstance(o, ConstInt) and o.value == 0 for o in inst.ops]
            if inst.opcode == "mul" and any(zero):
                new[id(inst)] = ConstInt(inst.type, 0)
            elif inst.opcode == "getelementptr" and len(inst.ops) == 2 and zero[1]:
                new[id(inst)] = inst.ops[0]
        for blk in fn.blocks:
            blk.instructions = [i for i in blk.instructions if id(i) not in new]
            for inst in blk.instructions:
                ops = [new.get(id(o), o) for o in inst.ops]
                changed |= any(a is not b for a, b in zip(ops, inst.ops))
                inst.ops = ops


def _fold_sign_tests(fn) -> None:
    """`icmp slt i, 0` on the loop's index i is false, and a select on it its false value."""
    index = {id(p) for p in iterations(fn).index}
    new = {}
    for inst in fn.instructions():
        if inst.opcode == "icmp" and inst.pred == "slt" and id(inst.ops[0]) in index and \
                isinstance(inst.ops[1], ConstInt) and inst.ops[1].value == 0:
            new[id(inst)] = ConstInt(T.i1, 0)
    for inst in fn.instructions():
        if inst.opcode == "select" and id(inst.ops[0]) in new:
            new[id(inst)] = inst.ops[2]
    for blk in fn.blocks:
        blk.instructions = [i for i in blk.instructions if id(i) not in new]
        for inst in blk.instructions:
            inst.ops = [new.get(id(o), o) for o in inst.ops]


def _users(fn, v):
    return [i for i in fn.instructions() if any(o is v for o in i.ops)]


def _drop_dead_geps(fn) -> None:
    used = {id(o) for i in fn.instructions() for o in i.ops}
    for blk in fn.blocks:
        blk.instructions = [i for i in blk.instructions
                            if i.opcode != "getelementptr" or id(i) in used]


# ---- analysis facts for the body -------------------------------------------------------------

def iterations(fn, rows=None) -> Iterations:
    """The body's iterations (analysis/sharing.py): the induction variable that starts at a
    schedule entry's first index, when the schedule is one-dimensional; `tid` varies.
    `rows`: {argument slot j: the `dims` slots that hold the length of a_j's rows}, for
    C-contiguous 2-D arrays (the launch stores their shapes there)."""
    tid = fn.params[TID]
    entries = _entries(fn, [fn.params[SCHED]])
    if any(_entry_offset(i.ops[0], entries) not in (0, 8) for i in fn.instructions()
           if i.opcode == "load" and _entry_offset(i.ops[0], entries) is not None):
        return Iterations(varying=(tid,))        # a schedule of several dimensions
    index = []
    for blk in fn.blocks:
        for phi in blk.phis():
            if _counts_from_start(phi, entries):
                index.append(phi)
    return Iterations(index=tuple(index), varying=(tid,),
                      row_extent=_row_extent(fn, rows) if rows else None)


def _row_extent(fn, rows):
    """Iterations.row_extent: is `value` a load of one of the `dims` slots that hold the row
    length of the array `root`?"""
    offsets = {id(fn.params[SCHED + j]): {8 * m for m in ms} for j, ms in rows.items()}

    def row_extent(root, value):
        if getattr(value, "opcode", "") != "load" or value.type != T.i64:
            return False
        base, offset = _constant_offset(value.ops[0])
        return base is fn.params[DIMS] and offset in offsets.get(id(root), ())
    return row_extent


def _entries(fn, sched) -> set:
    """Pointers to a schedule entry: the schedule, or `gep i8 schedule, x`."""
    ids = {id(s) for s in sched}
    out = set(ids)
    for i in fn.instructions():
        if i.opcode == "getelementptr" and len(i.ops) == 2 and id(i.ops[0]) in ids and \
                not isinstance(i.ops[1], ConstInt):
            out.add(id(i))
    return out


def _entry_offset(p, entries):
    """The byte offset of p within a schedule entry, or None when p is not in one."""
    if id(p) in entries:
        return 0
    if getattr(p, "opcode", "") == "getelementptr" and len(p.ops) == 2 and \
            id(p.ops[0]) in entries and isinstance(p.ops[1], ConstInt):
        return p.ops[1].value * T.size_of(p.source_type)
    return None


def _counts_from_start(phi, entries) -> bool:
    """phi = [start, outside], [phi + 1, inside], with start loaded from an entry's offset 0."""
    if len(phi.ops) != 2 or phi.type != T.i64:
        return False
    for a, b in (phi.ops, phi.ops[::-1]):
        if getattr(a, "opcode", "") == "load" and _entry_offset(a.ops[0], entries) == 0 and \
                getattr(b, "opcode", "") == "add" and \
                any(o is phi for o in b.ops) and any(isinstance(o, ConstInt) and o.value == 1
                                                      for o in b.ops):
            return True
    return False


def check_reductions(module, fn) -> list:
    """Memory indexed by `tid` must be a sum reduction's partial result or per-thread scratch
    (thread_memory.py); refuse anything else. Returns [(argument slot j, an access)] for the
    scratch that is a launch argument a_j."""
    tid = fn.params[TID]
    out = []
    for rs, access in check_thread_memory(module, fn, tid, depends_on(fn, tid)):
        out += [(r.index - SCHED, access) for r in rs
                if isinstance(r, Argument) and r.index > SCHED]
    return out


def depends_on(fn, v) -> set:
    """The ids of v and of the values computed from it (not through memory)."""
    out = {id(v)}
    changed = True
    while changed:
        changed = False
        for i in fn.instructions():
            if id(i) not in out and i.opcode != "load" and any(id(o) in out for o in i.ops):
                out.add(id(i))
                changed = True
    return out


# ---- the launch's arguments ------------------------------------------------------------------

def stored_arguments(fn, args, n) -> list:
    """Per slot of a launch's `args` array (an alloca of fn), the values stored into it."""
    slots = [[] for _ in range(n)]
    for i in fn.instructions():
        if i.opcode != "store":
            continue
        p = i.ops[1]
        if p is args:
            slots[0].append(i.ops[0])
        elif getattr(p, "opcode", "") == "getelementptr" and p.ops[0] is args and \
                len(p.ops) == 2 and isinstance(p.ops[1], ConstInt):
            k = p.ops[1].value * T.size_of(p.source_type) // 8
            if 0 <= k < n:
                slots[k].append(i.ops[0])
    return slots


def row_slots(fn, extents, dims, ndims: int, stored) -> dict:
    """{argument slot j: the slots of the launch's `dims` (an alloca of fn, `ndims` entries)
    that hold the row length of a_j}, for each a_j that is a 2-D array parameter of fn
    (`extents`: {parameter index: common.extent.Extent})."""
    held = stored_arguments(fn, dims, ndims)
    out = {}
    for j, values in enumerate(stored):
        v = values[0] if j and len(values) == 1 else None
        ext = extents.get(v.index) if isinstance(v, Argument) else None
        if ext is None or len(ext.dims) != 2:
            continue
        length = fn.params[ext.dims[1][0]]
        slots = frozenset(m for m, vs in enumerate(held) if vs and all(x is length for x in vs))
        if slots:
            out[j] = slots
    return out


def counts_up_from_zero(fn, rec, scheds) -> bool:
    """Does the loop's index start at a constant >= 0 (so it is never negative)? The schedule
    (one of `scheds`) comes from a scheduler call of launcher `rec` whose `starts` array holds
    only such constants."""
    calls = [i for i in fn.instructions() if i.opcode == "call" and
             i.callee_name in rec.schedulers and any(i.ops[4] is s for s in scheds)]
    if len(calls) != 1:
        return False
    starts = calls[0].ops[1]
    stored = [i.ops[0] for i in fn.instructions() if i.opcode == "store" and
              (i.ops[1] is starts or getattr(i.ops[1], "opcode", "") == "getelementptr" and
               i.ops[1].ops[0] is starts)]
    return bool(stored) and all(isinstance(v, ConstInt) and v.value >= 0 for v in stored)


def at(b, p, offset: int):
    """The address `offset` bytes into p (p itself at 0)."""
    return p if offset == 0 else b.gep(T.i8, p, [ConstInt(T.i64, offset)])


def task_function(name: str) -> Function:
    """A launch's task, `name(args, dims, steps, record)` (generated, no block yet): what each
    thread of the launcher runs on its entries of the schedule."""
    params = [Argument(T.ptr, p, "", k) for k, p in enumerate(("args", "dims", "steps", "record"))]
    fn = Function(name, T.void, params, prefix="define internal")
    fn.generated = True
    return fn


def flag_failure(b, record, offset: int, status) -> None:
    """The i64 `offset` bytes into record |= (status != 0), atomically: a task's body raised."""
    failed = b.cast("zext", b.icmp("ne", status, ConstInt(T.i32, 0)), T.i64)
    atomic(b, "or", at(b, record, offset), failed, None)
