"""Reverse mode of a parallel-for launch (rules/parallel.py): both sweeps on all threads.

The loop body becomes a function of its own (parallel_body.py) whose split gradient the driver
builds with `Threads` (shadow_updates.py: private updates are plain, others atomic). At the
launch the gradient's forward sweep takes a launch record from its pool (runtime/launch_pool.py:
kept between calls) and calls the launcher with a task function of its own, which runs the
body's augmented forward sweep:

    record: args'[width] = schedule copy, a_1..a_{n-1}, schedule copy, shadows of a_j, frames,
                           each privatised array's copies, kept frames (one per twin), kept
                           copies
            steps'[width] = sched step, 0.., sched step, 0.., 8..
            dims[inner+1], steps[...] (copies of the launch's), nthreads, nsched, failed,
            choice (copies or atomic adds, parallel_private.py), (offset, size) per copy,
            frames[nsched] (null, then each task's body frame), copies[p][nsched] (this call's),
            kept frames[twins][nsched], kept copies[p][nsched] (kept between calls),
            schedule copy

The launcher shifts every `args'[j]` by `steps'[j]` times the task's first entry, so a task
finds its arrays, their shadows and its own frame slot there, under any split of the schedule.
The reverse sweep calls the launcher again with the reverse task function on the same record
(the same schedule, threads and split), which runs the body's reverse sweep from the task's
frame. A body's split gradient keeps its frame and tape arrays in the task's kept slot between
calls (driver.split with keep_frame), and a task's copies stay in the record: a repeat call
allocates none of them. A forward sweep that fails later releases what the tasks' bodies made
this call (the record's `fail`, called as the pool is parked).

A fused launch (`fusable`: its reverse may run right after it) has one task function, which
runs the body's whole gradient per schedule entry; the copies are summed right after the
launch, and the reverse sweep has nothing to do. When privatised copies are
chosen by size, every task function has a twin with atomic adds in their place, and the
record's `choice` says which ran (Names.shared).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

from ....analysis.activity import differentiated
from ....analysis.types import roots
from ....ir import types as T
from ....ir.builder import MathBuilder
from ....ir.instructions import Instruction
from ....ir.module import Function
from ....ir.values import Argument, Constant, ConstInt, Global
from ....options import Activity
from ....rules.parallel import ParallelUpdates, lookup_parallel, thread_ids
from ....runtime import heap
from ....runtime import launch_pool  # noqa: F401  (registers the pool's helpers)
from ....runtime.helpers import ensure
from ..calls.calls import drop_name, free_name
from ...common.parallel_body import (TID, at, check_reductions, counts_up_from_zero, iterations,
                                    flag_failure, make_body, row_slots, stored_arguments, task_function)
from .parallel_private import BY_SIZE, bounds, choose, iterations_helper, owned, small, sum_helper
from ..shadows.shadow_updates import PER_TASK, Threads
from ..calls.success import always_succeeds
from ..tape.tape_keys import CallFrame

PENDING = "parallel"            # module.pending: Body records whose split gradients to build
LAUNCHES = "parallel launch"    # module.derived: id(launch call) -> (Layout, Names)
UPDATES = "parallel updates"    # module.facts: the ParallelUpdates reverse_mode was given


@dataclass(frozen=True)
class Body:
    """A body function to differentiate with `threads`, as the split pair (aug, rev)."""
    name: str
    activity: tuple
    aug: str
    rev: str
    noalias: bool
    threads: Threads
    mode: ParallelUpdates = ParallelUpdates.AUTO
    fused: bool = False     # aug is the body's whole gradient (both sweeps); rev is unused
    by_size: bool = False   # its copies give way to atomic adds when large (Names.shared)
    report: bool = True     # its shadow updates are listed by `explain`


@dataclass(frozen=True)
class Layout:
    """Byte offsets in a launch record (module docstring)."""
    n: int
    inner: int
    steps_len: int
    privatised: int = 0
    twins: int = 1      # 2 when the tasks have an atomic twin (Names.shared): a kept frame each

    @property
    def width(self) -> int:
        return 2 * self.n + self.columns

    @property
    def columns(self) -> int:
        """Slot columns after the arrays: this call's frames and copies, then the kept ones."""
        return 1 + self.privatised + self.twins + self.privatised

    def kept_frame(self, variant: int) -> int:
        return 2 * self.n + 1 + self.privatised + variant

    def kept_copy(self, p: int) -> int:
        return 2 * self.n + 1 + self.privatised + self.twins + p

    @property
    def ext_steps(self) -> int:
        return 8 * self.width

    @property
    def dims(self) -> int:
        return 16 * self.width

    @property
    def steps(self) -> int:
        return self.dims + 8 * (self.inner + 1)

    @property
    def threads(self) -> int:
        return self.steps + 8 * self.steps_len

    @property
    def nsched(self) -> int:
        return self.threads + 8

    @property
    def failed(self) -> int:
        return self.nsched + 8

    @property
    def choice(self) -> int:
        """1 when the tasks privatise the shadows (Names.shared: they may add atomically)."""
        return self.failed + 8

    @property
    def copies(self) -> int:
        """Per privatised array: (byte offset of its first byte, size in bytes)."""
        return self.choice + 8

    @property
    def frames(self) -> int:
        return self.copies + 16 * self.privatised


@dataclass(frozen=True)
class Names:
    forward_task: str
    reverse_task: str
    free_record: str
    copies: tuple = ()      # parallel_private.Copy per privatised argument
    aug: str = ""           # the body's gradient the forward task runs
    fused: bool = False     # forward_task runs both sweeps; the reverse sweep does nothing
    shared: "Names | None" = None   # the same tasks with atomic updates instead of copies,
                                    # run when the copies would be large (parallel_private.py)


def launches(g, inst) -> bool:
    """Is inst a parallel-for launch that moves derivatives (its arguments hold shadowed
    memory)?"""
    rec = lookup_parallel(inst.callee_name) if inst.opcode == "call" else None
    return rec is not None and g.act.has_shadow(inst.ops[rec.args])


# ---- the forward sweep ------------------------------------------------------------------------

def forward_launch(fwd, inst, blk):
    """Emit the launch of the augmented body in place of the primal launch; returns it."""
    g = fwd.g
    rec = lookup_parallel(inst.callee_name)
    layout, dup, noalias, stored = _describe(g, inst, rec)
    names = _derive(g, inst, rec, layout, dup, noalias, stored)
    layout = replace(layout, privatised=len(names.copies), twins=2 if names.shared else 1)
    g.module.derived.setdefault(LAUNCHES, {})[id(inst)] = (layout, names)
    b = MathBuilder(g.module, fwd.fb[blk])
    start = len(fwd.fb[blk].instructions)
    shadow_loads = []
    record, call = _emit_forward(b, g, inst, rec, layout, dup, names, shadow_loads)
    if names.fused:
        _note_failure(g, b, record, layout, rec, inst)
        _add_copies(b, g, record, layout, names)
    for c in fwd.fb[blk].instructions[start:]:
        fwd.clones.append((c, None, (0,) if any(c is s for s in shadow_loads) else ()))
    if names.fused:
        return call
    fwd.call_frames[inst] = record
    _note_failure(g, b, record, layout, rec, inst)
    return call


def _describe(g, inst, rec):
    """(Layout, per argument j: does a_j have a shadow, may the body's arrays be taken as
    disjoint) of a launch, or a refusal."""
    n, inner = inst.ops[rec.array_count], inst.ops[rec.inner_ndim]
    steps = inst.ops[rec.steps]
    if not (isinstance(n, ConstInt) and isinstance(inner, ConstInt) and
            isinstance(inst.ops[rec.body], Global) and getattr(steps, "opcode", "") == "alloca"
            and not steps.ops and getattr(inst.ops[rec.args], "opcode", "") == "alloca"):
        raise g.unsupported("a parallel-for launch not in the launcher's usual form", inst)
    stored = stored_arguments(g.primal, inst.ops[rec.args], n.value)
    if any(not v for v in stored[1:]):
        raise g.unsupported("an argument of a parallel loop is not found", inst)
    dup = [False] + [any(g.act.has_shadow(v) for v in stored[j]) for j in range(1, n.value)]
    for j in range(1, n.value):
        if dup[j] and not all(g.act.has_shadow(v) for v in stored[j]):
            raise g.unsupported("an argument of a parallel loop is sometimes differentiable "
                                "memory and sometimes not", inst)
    layout = Layout(n.value, inner.value, T.size_of(steps.source_type) // 8)
    return layout, dup, g.alias.noalias_params and _disjoint(g, stored[1:]), stored


def _disjoint(g, slots) -> bool:
    """Do the arrays of distinct slots never overlap (roots that alias analysis separates)?"""
    rs = [[r for v in vs for r in roots(v)] for vs in slots]
    for a in range(len(rs)):
        for b in range(a + 1, len(rs)):
            if any(x is y or g.alias.may_alias(x, y) for x in rs[a] for y in rs[b]):
                return False
    return True


def _scratch_stays_in_loop(g, inst, rec, stored, dup, scratch) -> None:
    """Per-thread scratch (common/thread_memory.py) is the loop's own: what the iterations leave
    in the rows depends on the schedule, and its adjoint would go to whichever iteration the
    reverse sweep reverses first on a row. Refuse a kernel that may read differentiable scratch
    after the launch (a float load, a call, an argument of another launch)."""
    later = _after(inst)
    others = {id(i.ops[rec.args]) for i in later
              if i.opcode == "call" and i.callee_name == rec.name and i is not inst}
    for j, access in scratch:
        if not dup[j]:
            continue
        rs = {id(r) for v in stored[j] for r in roots(v)}

        def inside(p):
            return p.type.is_ptr and any(id(r) in rs for r in roots(p))
        for i in later:
            if i is inst:
                continue
            if i.opcode == "load" and i.type.is_float and inside(i.ops[0]) or \
                    i.opcode == "call" and any(inside(o) for o in i.ops) or \
                    i.opcode == "store" and inside(i.ops[0]) and \
                    any(id(r) in others for r in roots(i.ops[1])):
                raise g.unsupported(
                    "per-thread scratch of a parallel loop (memory indexed by the thread) is "
                    "read after the loop: what the iterations leave there depends on the "
                    "schedule", i, "keep per-thread scratch inside the prange body; write "
                    "results to an array indexed by the iteration")


def _after(inst) -> list:
    """The instructions that may run after inst: the rest of its block and the blocks reachable
    from there (all of a loop around it)."""
    blk = inst.block
    out = blk.instructions[blk.instructions.index(inst) + 1:]
    seen, work = set(), list(blk.successors())
    while work:
        b = work.pop()
        if b not in seen:
            seen.add(b)
            out += b.instructions if b is not blk else []
            work.extend(b.successors())
    return out + (blk.instructions if blk in seen else [])


def _derive(g, inst, rec, layout, dup, noalias, stored) -> Names:
    """Queue the body's gradient (whole when the launch is fused, else split); add the task
    functions and the record's free."""
    module = g.module
    wrapper = inst.ops[rec.body].name
    nonnegative = counts_up_from_zero(g.primal, rec, stored[0])
    body = make_body(module, wrapper, layout.n, thread_ids(rec), rec.raise_calls, nonnegative)
    fn = module.functions[body]
    _scratch_stays_in_loop(g, inst, rec, stored, dup, check_reductions(module, fn))
    one = make_body(module, wrapper, layout.n, thread_ids(rec), rec.raise_calls, nonnegative,
                    one_entry=True) if fusable(g, inst, fn, rec) else None
    fused = one is not None
    if fused:
        body, fn = one, module.functions[one]
    activity = tuple([Activity.CONST] * 6 + [Activity.DUP if d else Activity.CONST
                                             for d in dup[1:]])
    mode = updates_mode(module)
    rows = row_slots(g.primal, g.extents, inst.ops[rec.dims], layout.inner + 1, stored)
    find = partial(iterations, rows=rows)
    copies = tuple(choose(g, fn, stored, dup, noalias, mode, find))
    spec = (module, body, fn, activity, noalias, mode, rows, find, rec, dup, fused)
    twins = 2 if copies and mode is ParallelUpdates.AUTO else 1
    layout = replace(layout, privatised=len(copies), twins=twins)
    names = _register(spec, layout, copies)
    if twins == 2:
        names = replace(names, shared=_register(spec, layout, (), report=False, variant=1))
    _record_functions(module, names, layout)
    return names


def _register(spec, layout: Layout, copies, report: bool = True, variant: int = 0) -> Names:
    """The Names of the body's gradient with these copies, queued and its tasks added the
    first time they are asked for."""
    module, body, fn, activity, noalias, mode, rows, find, rec, dup, fused = spec
    registry = module.derived.setdefault(PENDING, {})
    key = (body, activity, noalias, tuple(c.slot for c in copies), mode,
           tuple(sorted(rows.items())), layout.privatised)
    if key not in registry:
        k = len(registry)
        aug, rev = f"{body}.{'grad' if fused else 'aug'}.{k}", f"{body}.rev.{k}"
        names = Names(f"{body}.task.fwd.{k}", f"{body}.task.rev.{k}", f"{body}.record.free.{k}",
                      copies, aug, fused)
        registry[key] = names
        threads = Threads(iterations=find, owned=owned(fn, copies))
        by_size = bool(copies) and mode is ParallelUpdates.AUTO
        module.pending.setdefault(PENDING, []).append(
            Body(body, activity, aug, rev, noalias, threads, mode, fused, by_size, report))
        if fused:
            _fused_task(module, names.forward_task, aug, rec, layout, dup, copies)
        else:
            _task(module, names.forward_task, aug, rec, layout, dup, False, variant=variant)
            _task(module, names.reverse_task, rev, rec, layout, dup, True, copies)
            _free_record(module, names.free_record, free_name(aug), layout)
    return registry[key]


RELEASES = "parallel releases"   # module.derived: release functions of fused bodies' tapes
WORKSPACES = 64     # tape workspaces of a fused body's gradient: one per thread id (mod 64)


def per_thread_workspace(g) -> None:
    """A fused body's gradient (combined, its tape parked between calls) parks its tape in the
    slot of the thread running it: its workspace global becomes WORKSPACES slots indexed by the
    thread id, so each thread takes back the tape it left (the slots' exchanges keep two tasks
    of one slot correct)."""
    slot = f"{g.fn.name}.workspace"
    text = f'@"{slot}" = internal global ptr null, align 8'
    if text not in g.module.items:
        return
    g.module.items[g.module.items.index(text)] = \
        f'@"{slot}" = internal global [{WORKSPACES} x ptr] zeroinitializer, align 8'
    entry = g.fn.blocks[0]
    at = sum(1 for i in entry.instructions if i.opcode == "alloca")
    tid = g.fn.params[TID]
    which = Instruction("and", T.i64, [tid, ConstInt(T.i64, WORKSPACES - 1)], name="ws.which")
    mine = Instruction("getelementptr", T.ptr, [Global(T.ptr, slot), which], name="ws.slot",
                       source_type=T.ptr)
    for k, inst in enumerate((which, mine)):
        entry.insert(at + k, inst)
    for inst in g.fn.instructions():
        if inst.opcode == "call" and inst.callee_name in ("enzpy.take", "enzpy.park"):
            inst.ops = [mine if isinstance(o, Global) and o.name == slot else o for o in inst.ops]
    _release_every_slot(g.module, f"{g.fn.name}.release", slot)
    g.module.derived.setdefault(RELEASES, []).append(f"{g.fn.name}.release")


def _release_every_slot(module, name, slot) -> None:
    """`name()`, the body gradient's release (tape.py), releases the tape of each slot."""
    fn = module.functions[name]
    call = next(i for i in fn.instructions() if i.callee_name == "enzpy.release")
    entry, loop, done = fn.blocks[0], fn.add_block("loop"), fn.add_block("done")
    entry.instructions = []
    MathBuilder(module, entry).br(loop)
    b = MathBuilder(module, loop)
    k = b.phi(T.i64, [(ConstInt(T.i64, 0), entry)])
    b.call("enzpy.release", T.void, [b.gep(T.ptr, Global(T.ptr, slot), [k]), *call.ops[1:]])
    k1 = b.add(k, ConstInt(T.i64, 1))
    k.ops.append(k1)
    k.blocks.append(loop)
    b.cbr(b.icmp("slt", k1, ConstInt(T.i64, WORKSPACES)), loop, done)
    MathBuilder(module, done).ret()


def chain_releases(module, out_name: str) -> None:
    """The gradient's `<out_name>.release()` (enzyme_py's workspace.release_tape) also releases
    the tapes its fused bodies park per thread; it is added when the gradient parks none."""
    bodies = module.derived.pop(RELEASES, [])
    if not bodies:
        return
    name = f"{out_name}.release"
    fn = module.functions.get(name)
    if fn is None:
        fn = Function(name, T.void, [], prefix="define")
        fn.generated = True
        fn.add_block("entry")
        module.add_function(fn)
    last = fn.blocks[-1]
    last.instructions = [i for i in last.instructions if i.opcode != "ret"]
    b = MathBuilder(module, last)
    for body in bodies:
        b.call(body, T.void, [])
    b.ret()


def reported(body: Body, updates) -> list:
    """The shadow updates of a body's gradient as `explain` lists them: none for the atomic
    twin of a body whose copies are chosen by size, whose own privatised updates say so."""
    if not body.report:
        return []
    if not body.by_size:
        return list(updates)
    return [replace(u, how=u.how + BY_SIZE) if u.how == PER_TASK else u for u in updates]


def fusable(g, inst, body, rec) -> bool:
    """May the launch's reverse run right after it, each task reversing its own iterations
    (one launch of the body's whole gradient)? Yes when the body never raises, the gradient is
    not a split callee's, and nothing after the launch is differentiated: no active value, no
    store into shadowed memory, no call with shadowed memory, no return that may fail, and the
    launch is not reached again (a loop around it)."""
    if g.split or any(i.opcode == "call" and i.callee_name in rec.raise_calls
                      for i in body.instructions()):
        return False
    blk = inst.block
    rest = blk.instructions[blk.instructions.index(inst) + 1:]
    seen, work = {blk}, [rest]
    while work:
        for i in work.pop():
            if not _quiet(g, i, seen):
                return False
            for s in i.successors() if i.is_terminator else ():
                if s is blk:
                    return False
                if s not in seen:
                    seen.add(s)
                    work.append(s.instructions)
    return True


def _quiet(g, i, reached) -> bool:
    if i.opcode == "ret":
        status = i.ops[0] if i.ops else None
        if getattr(status, "opcode", "") == "phi" and status.block is i.block:
            return all(g.success_codes is None or isinstance(v, ConstInt) and
                       v.value in g.success_codes
                       for v, p in zip(status.ops, status.blocks) if p in reached)
        return always_succeeds(g.module, i, g.success_codes)
    if i.opcode == "store":
        return not g.act.has_shadow(i.ops[1])
    if i.opcode == "call":
        return not differentiated(g.act, i) and not any(g.act.has_shadow(o) for o in i.ops)
    return not g.act.is_active(i) or i.type.is_ptr


def updates_mode(module) -> ParallelUpdates:
    """The module's ParallelUpdates (reverse_mode's `parallel` option)."""
    return module.facts.get(UPDATES, ParallelUpdates.AUTO)


def _emit_forward(b, g, inst, rec, L: Layout, dup, names: Names, shadow_loads):
    i64 = T.i64
    args, dims, steps = inst.ops[rec.args], inst.ops[rec.dims], inst.ops[rec.steps]
    nsched, sstep = b.load(i64, dims), b.load(i64, steps)
    slots = b.mul(nsched, ConstInt(i64, 8 * L.columns))
    size = b.add(ConstInt(i64, L.frames), b.add(slots, b.mul(nsched, sstep)))
    record = _pool_record(g, b, size, names)
    frames = at(b, record, L.frames)
    sched = b.gep(T.i8, frames, [slots])
    this_call = b.mul(nsched, ConstInt(i64, 8 * (1 + L.privatised)))    # frames, then copies
    b.call("llvm.memset.p0.i64", T.void, [frames, ConstInt(T.i8, 0), this_call, ConstInt(T.i1, 0)])
    b.call("llvm.memcpy.p0.p0.i64", T.void, [sched, b.load(T.ptr, args), b.mul(nsched, sstep),
                                             ConstInt(T.i1, 0)])
    zero = ConstInt(i64, 0)
    for j in range(L.n):
        if j == 0:
            primal = shadow = sched
        else:
            primal = b.load(T.ptr, at(b, args, 8 * j))
            shadow = primal
            if dup[j]:
                address = b.gep(T.i8, args, [ConstInt(i64, 8 * j)])
                shadow_loads.append(address)
                shadow = b.load(T.ptr, address)
        for k, v in ((j, primal), (L.n + j, shadow)):
            b.store(v, at(b, record, 8 * k))
            b.store(sstep if j == 0 else zero, at(b, record, L.ext_steps + 8 * k))
    for p in range(L.columns):      # the frame slots, each copy's slots, then the kept ones
        base = b.gep(T.i8, frames, [b.mul(nsched, ConstInt(i64, 8 * p))])
        b.store(base, at(b, record, 8 * (2 * L.n + p)))
        b.store(ConstInt(i64, 8), at(b, record, L.ext_steps + 8 * (2 * L.n + p)))
    for p, c in enumerate(names.copies):
        lo, nbytes = bounds(b, g, c)
        b.store(lo, at(b, record, L.copies + 16 * p))
        b.store(nbytes, at(b, record, L.copies + 16 * p + 8))
    for k in range(L.inner + 1):
        b.store(b.load(i64, at(b, dims, 8 * k)), at(b, record, L.dims + 8 * k))
    for k in range(L.steps_len):
        b.store(b.load(i64, at(b, steps, 8 * k)), at(b, record, L.steps + 8 * k))
    b.store(inst.ops[rec.threads], at(b, record, L.threads))
    b.store(nsched, at(b, record, L.nsched))
    b.store(zero, at(b, record, L.failed))
    choice = ConstInt(i64, 1)
    if names.shared is not None:
        count = iterations_helper(g.module)
        iters = b.call(count, i64, [sched, nsched, sstep])
        copied = [(b.load(i64, at(b, record, L.copies + 16 * p + 8)), c.type)
                  for p, c in enumerate(names.copies)]
        choice = b.cast("zext", small(b, copied, iters, inst.ops[rec.threads]), i64)
    b.store(choice, at(b, record, L.choice))
    call = _launch(b, rec, _pick(b, record, L, names, "forward_task"), record, L,
                   inst.ops[rec.threads])
    return record, call


def _pick(b, record, L: Layout, names: Names, field: str):
    """names.<field>, or its shared twin's when the record's choice says so."""
    mine = Global(T.ptr, getattr(names, field))
    if names.shared is None:
        return mine
    chosen = b.icmp("ne", b.load(T.i64, at(b, record, L.choice)), ConstInt(T.i64, 0))
    return b.select(chosen, mine, Global(T.ptr, getattr(names.shared, field)))


def _launch(b, rec, task, record, L: Layout, threads):
    i64 = T.i64
    ops = [task, record, at(b, record, L.dims), at(b, record, L.ext_steps),
           record, ConstInt(i64, L.inner), ConstInt(i64, L.width), threads]
    return b.call(rec.name, T.void, ops)


def _note_failure(g, b, record, L: Layout, rec, inst) -> None:
    """The gradient's failure flag |= the launch's (a task's body raised)."""
    if not isinstance(g.primal.ret_type, T.IntType):
        raise g.unsupported("a parallel loop in a function without a status", inst)
    if g.parallel_failed is None:
        g.parallel_failed = (g.tape.new_field(T.i64, ConstInt(T.i64, 0)), rec.error_status)
    field = g.parallel_failed[0]
    failed = b.load(T.i64, at(b, record, L.failed))
    g.tape.store(b, b.binop("or", g.tape.load(b, field), failed), field)


def parallel_status(g, b, ok, status):
    """At a return of the forward sweep: (is it a success, the status to return). A launch
    whose body raised makes it an error with the launcher's error status."""
    if g.parallel_failed is None or status is None or ok is False:
        return ok, status
    field, error = g.parallel_failed
    clean = b.icmp("eq", g.tape.load(b, field), ConstInt(T.i64, 0))
    status = b.select(clean, status, ConstInt(status.type, error))
    return (clean if ok is True else b.binop("and", ok, clean)), status


# ---- the reverse sweep ------------------------------------------------------------------------

def reverse_launch(g, inst, block, b) -> None:
    """Run the body's reverse sweep on all threads from the launch record; free the record."""
    rec = lookup_parallel(inst.callee_name)
    layout, names = g.module.derived[LAUNCHES][id(inst)]
    if names.fused:
        return
    home = g.loops.loop_of(inst.block)
    e = g.tape.entry(CallFrame(inst), T.ptr, home,
                     "the parallel loop's record: its schedule and each task's saved values")
    record = g.tape.read(b, e, block)
    threads = b.load(T.i64, at(b, record, layout.threads))
    _launch(b, rec, _pick(b, record, layout, names, "reverse_task"), record, layout, threads)
    _add_copies(b, g, record, layout, names)


def _add_copies(b, g, record, layout: Layout, names: Names) -> None:
    """Add each task's copies into the shadows, in schedule order, and free them; free the
    record."""
    nsched = b.load(T.i64, at(b, record, layout.nsched))
    for p, c in enumerate(names.copies):
        lo = b.load(T.i64, at(b, record, layout.copies + 16 * p))
        nbytes = b.load(T.i64, at(b, record, layout.copies + 16 * p + 8))
        shadow = b.load(T.ptr, at(b, record, 8 * (layout.n + c.slot)))
        copies = b.gep(T.i8, at(b, record, layout.frames),
                       [b.mul(nsched, ConstInt(T.i64, 8 * (1 + p)))])
        count = b.binop("sdiv", nbytes, ConstInt(T.i64, T.size_of(c.type)))
        b.call(sum_helper(g.module, c.type), T.void,
               [b.gep(T.i8, shadow, [lo]), copies, nsched, count])


# ---- generated functions ----------------------------------------------------------------------

def _task(module, name, target, rec, L: Layout, dup, reverse: bool, copies=(),
          variant: int = 0) -> None:
    """task(args', dims', steps', record): the body's aug (or rev, with a fresh copy of each
    privatised argument's shadow) on this task's entries. The aug keeps its frame in the task's
    kept slot (`variant`'s column) between calls; this call's slot gets it when the aug
    succeeds."""
    fn = task_function(name)
    b = MathBuilder(module, fn.add_block("entry"))
    args, dims, _, record = fn.params
    tid = b.call(rec.thread_id, T.i64, [])
    arrays = [b.load(T.ptr, at(b, args, 8 * j)) for j in range(L.n)]
    shadow = {j: b.load(T.ptr, at(b, args, 8 * (L.n + j))) for j in range(1, L.n) if dup[j]}
    for p, c in enumerate(copies):
        shadow[c.slot] = _fresh_copy(b, args, record, L, p)
    shadows = [shadow[j] for j in sorted(shadow)]
    slot = b.load(T.ptr, at(b, args, 16 * L.n))
    kept = b.load(T.ptr, at(b, args, 8 * L.kept_frame(variant)))
    last = b.load(T.ptr, slot) if reverse else kept
    ops = [args, dims, at(b, record, L.steps), Constant(T.ptr, "null"), tid, *arrays, *shadows, last]
    status = b.call(target, T.void if reverse else T.i32, ops)
    if not reverse:
        ok = b.icmp("eq", status, ConstInt(T.i32, 0))
        b.store(b.select(ok, b.load(T.ptr, kept), Constant(T.ptr, "null")), slot)
        flag_failure(b, record, L.failed, status)
    b.ret()
    module.add_function(fn)


def _fused_task(module, name, target, rec, L: Layout, dup, copies) -> None:
    """task(args', dims', steps', record): per schedule entry of the task, the body's whole
    gradient on that entry alone (`target` runs the first entry it is given), adding into
    fresh copies of the privatised shadows."""
    fn = task_function(name)
    entry, loop, each, done = (fn.add_block(x) for x in ("entry", "loop", "each", "done"))
    b = MathBuilder(module, entry)
    args, dims, _, record = fn.params
    i64 = T.i64
    tid = b.call(rec.thread_id, i64, [])
    arrays = [b.load(T.ptr, at(b, args, 8 * j)) for j in range(1, L.n)]
    shadow = {j: b.load(T.ptr, at(b, args, 8 * (L.n + j))) for j in range(1, L.n) if dup[j]}
    for p, c in enumerate(copies):
        shadow[c.slot] = _fresh_copy(b, args, record, L, p)
    shadows = [shadow[j] for j in sorted(shadow)]
    count = b.load(i64, dims)
    sstep = b.load(i64, at(b, record, L.steps))
    sched = b.load(T.ptr, args)
    b.br(loop)
    b = MathBuilder(module, loop)
    e = b.phi(i64, [(ConstInt(i64, 0), entry)])
    b.cbr(b.icmp("slt", e, count), each, done)
    b = MathBuilder(module, each)
    entry_at = b.gep(T.i8, sched, [b.mul(e, sstep)])
    status = b.call(target, T.i32, [args, dims, at(b, record, L.steps), Constant(T.ptr, "null"),
                                    tid, entry_at, *arrays, *shadows])
    flag_failure(b, record, L.failed, status)
    e.ops.append(b.add(e, ConstInt(i64, 1)))
    e.blocks.append(each)
    b.br(loop)
    MathBuilder(module, done).ret()
    module.add_function(fn)


def _fresh_copy(b, args, record, L: Layout, p: int):
    """A zeroed copy of privatised shadow p for this task (the task's kept copy, grown when too
    small), noted in the task's slot of the record (the launch adds it into the shadow); returns
    the pointer that stands for the shadow's base."""
    lo = b.load(T.i64, at(b, record, L.copies + 16 * p))
    nbytes = b.load(T.i64, at(b, record, L.copies + 16 * p + 8))
    ensure(b.module, "enzpy.pool.copy")
    copy = b.call("enzpy.pool.copy", T.ptr, [b.load(T.ptr, at(b, args, 8 * L.kept_copy(p))),
                                             nbytes])
    b.store(copy, b.load(T.ptr, at(b, args, 8 * (2 * L.n + 1 + p))))
    return b.gep(T.i8, copy, [b.sub(ConstInt(T.i64, 0), lo)])


def _free_record(module, name, free_body: str, L: Layout) -> None:
    """free(record): what each task's body made this call (a forward sweep that failed later);
    the frames and the record stay in the pool."""
    record = Argument(T.ptr, "record", "", 0)
    fn = Function(name, T.void, [record], prefix="define internal")
    fn.generated = True
    entry, loop, each, done = (fn.add_block(x) for x in ("entry", "loop", "each", "done"))
    nxt = fn.add_block("next")
    b = MathBuilder(module, entry)
    n = b.load(T.i64, at(b, record, L.nsched))
    frames = at(b, record, L.frames)
    b.br(loop)
    b = MathBuilder(module, loop)
    i = b.phi(T.i64, [(ConstInt(T.i64, 0), entry)])
    b.cbr(b.icmp("slt", i, n), each, done)
    b = MathBuilder(module, each)
    frame = b.load(T.ptr, b.gep(T.ptr, frames, [i]))
    has = b.icmp("ne", frame, Constant(T.ptr, "null"))
    call = fn.add_block("call")
    b.cbr(has, call, nxt)
    MathBuilder(module, call).call(free_body, T.void, [frame])
    MathBuilder(module, call).br(nxt)
    b = MathBuilder(module, nxt)
    i1 = b.add(i, ConstInt(T.i64, 1))
    b.br(loop)
    i.ops.append(i1)
    i.blocks.append(nxt)
    MathBuilder(module, done).ret()
    fn.blocks = [entry, loop, each, call, nxt, done]
    module.add_function(fn)


# ---- the pool of launch records (runtime/launch_pool.py) ---------------------------------------

def _pool_record(g, b, size, names: Names):
    """This call's next launch record, of `size` bytes, from the gradient's pool."""
    pool, used = _pool(g)
    ensure(g.module, "enzpy.pool.record")
    k = g.tape.load(b, used)
    g.tape.store(b, b.add(k, ConstInt(T.i64, 1)), used)
    return b.call("enzpy.pool.record", T.ptr, [g.tape.frame.address(b, pool), k, size,
                                               Global(T.ptr, names.free_record + ".drop"),
                                               Global(T.ptr, names.free_record + ".fail")])


def _pool(g):
    """(pool, records used this call) fields of the gradient: the pool is taken from the
    gradient's global at frame setup and parked back where the call releases its tape; the
    gradient's release (chain_releases) frees it."""
    if g.launch_pool is not None:
        return g.launch_pool
    slot = f"{g.fn.name}.pool"
    g.module.items.append(f'@"{slot}" = internal global ptr null, align 8')
    for name in ("enzpy.pool.take", "enzpy.pool.park", "enzpy.pool.release"):
        ensure(g.module, name)
    b = g.tape.init_builder
    pool = g.tape.new_field(T.ptr, b.call("enzpy.pool.take", T.ptr, [Global(T.ptr, slot)]))
    used = g.tape.new_field(T.i64, ConstInt(T.i64, 0))

    def park(b, failed):
        b.call("enzpy.pool.park", T.void, [Global(T.ptr, slot), g.tape.load(b, pool),
                                           g.tape.load(b, used), ConstInt(T.i1, int(failed))])
    g.tape.on_release.append(park)
    release = Function(f"{slot}.release", T.void, [], prefix="define internal")
    release.generated = True
    rb = MathBuilder(g.module, release.add_block("entry"))
    rb.call("enzpy.pool.release", T.void, [Global(T.ptr, slot)])
    rb.ret()
    g.module.add_function(release)
    g.module.derived.setdefault(RELEASES, []).append(release.name)
    g.launch_pool = (pool, used)
    return g.launch_pool


def _record_functions(module, names: Names, L: Layout) -> None:
    """The record's drop (free the frames and copies its tasks keep, and the record) and fail
    (release what the tasks' bodies made this call: the forward sweep failed later)."""
    drop, fail = names.free_record + ".drop", names.free_record + ".fail"
    if drop in module.functions:
        return
    variants = [names] + ([names.shared] if names.shared else [])
    record = Argument(T.ptr, "record", "", 0)
    fn = Function(drop, T.void, [record], prefix="define internal")
    fn.generated = True
    b = MathBuilder(module, fn.add_block("entry"))
    n = b.load(T.i64, at(b, record, L.nsched))
    kept = [(L.kept_frame(v), None if nm.fused else drop_name(nm.aug))
            for v, nm in enumerate(variants)] + [(L.kept_copy(p), "") for p in range(L.privatised)]
    for col, release in kept:
        if release is None:
            continue
        base = b.load(T.ptr, at(b, record, 8 * col))
        b = _each_slot(module, fn, b, n, base, release)
    heap.free(b, b.gep(T.i8, record, [ConstInt(T.i64, -32)]))
    b.ret()
    module.add_function(fn)
    fn = Function(fail, T.void, [record], prefix="define internal")
    fn.generated = True
    b = MathBuilder(module, fn.add_block("entry"))
    if not names.fused and names.shared is None:
        b.call(names.free_record, T.void, [record])
    elif not names.fused:       # the twin the record's choice ran
        mine, twin, done = (fn.add_block(x) for x in ("copies", "atomic", "done"))
        b.cbr(b.icmp("ne", b.load(T.i64, at(b, record, L.choice)), ConstInt(T.i64, 0)), mine, twin)
        for blk, nm in ((mine, names), (twin, names.shared)):
            MathBuilder(module, blk).call(nm.free_record, T.void, [record])
            MathBuilder(module, blk).br(done)
        b = MathBuilder(module, done)
    b.ret()
    module.add_function(fn)


def _each_slot(module, fn, b, n, base, release: str):
    """for e < n: p = base[e]; if p: release(p) (heap.free when release is ""). Returns the
    builder after the loop."""
    entry = b.block
    k = len(fn.blocks)
    loop, each, call, nxt, done = (fn.add_block(f"{x}.{k}")
                                   for x in ("loop", "each", "call", "next", "done"))
    b.br(loop)
    b = MathBuilder(module, loop)
    i = b.phi(T.i64, [(ConstInt(T.i64, 0), entry)])
    b.cbr(b.icmp("slt", i, n), each, done)
    b = MathBuilder(module, each)
    p = b.load(T.ptr, b.gep(T.ptr, base, [i]))
    b.cbr(b.icmp("ne", p, Constant(T.ptr, "null")), call, nxt)
    cb = MathBuilder(module, call)
    if release:
        cb.call(release, T.void, [p])
    else:
        heap.free(cb, p)
    cb.br(nxt)
    b = MathBuilder(module, nxt)
    i.ops.append(b.add(i, ConstInt(T.i64, 1)))
    i.blocks.append(nxt)
    b.br(loop)
    return MathBuilder(module, done)
