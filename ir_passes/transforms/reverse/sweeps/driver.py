"""Reverse mode: add the gradient of a function to its module.

The gradient runs the augmented forward sweep (forward_sweep.py), then, if the primal succeeded,
the reverse sweep (reverse_sweep.py). Values cross from one to the other through the tape (tape.py)
or are recomputed (availability.py). Instruction adjoints come from the rule table (rules/).
Calls into functions of the module use their split gradients (calls.py), generated here from a
worklist after the top-level gradient.
"""
from __future__ import annotations

from typing import Sequence

from ....analysis.tripcount import constant_trip_bound, exact_trip
from ....analysis.written import written_params
from ....errors import UnsupportedError
from ....ir import types as T
from ....ir.builder import MathBuilder
from ....ir.edit import before_terminator, replace_uses
from ....ir.instructions import Instruction
from ....ir.module import Block, Function, Module
from ....ir.values import Argument, Constant, ConstInt
from ....options import Activity, CacheMode, activities, cache_mode
from ....rules.finite import NAN_TESTS, tests_nan
from ....rules.convention import success_codes as registered_success_codes
from ....rules.parallel import ParallelUpdates
from ....runtime import heap as _heap
from ....runtime.shared import place_helpers, set_runtime
from ...common.extent import Extent
from ...common.noneed import drop
from ...common.vector_math import VectorLibrary, use_vector_variants
from ...prepare.pipeline import REVERSE as REVERSE_PREPARE, prepare
from ..calls.calls import DERIVED, drop_name, free_name
from ..loops.checkpoint.budget import TAPE, Memory
from ..loops.checkpoint.emit import emit_split
from ..loops.checkpoint.outline import outline_time_loops, time_loop
from ..loops.checkpoint.schedule import checkpoint_status
from .forward_sweep import ForwardSweep
from ..loops.fusion import fused_loops
from ..loops.gated import gated_loops
from .gradient import Gradient, Sweep
from ..parallel.parallel_launch import PENDING as PARALLEL
from ..parallel.parallel_launch import UPDATES, chain_releases, per_thread_workspace, reported
from ..parallel.parallel_private import check_deterministic
from ..calls import public_split
from ..tape.recurrence import fill as fill_recurrences
from .report import layout, record_counts
from ..tape.restore import emit_undos, put_back, snapshot
from .reverse_sweep import ReverseSweep
from ..shadows.shadow_updates import ShadowUpdates, Threads
from ..calls.success import blocks_reaching_success

REGISTERED = object()   # success_codes default: rules/convention.py's registered codes
MAX_FIXED_TRIPS = 256   # a thread's tape arrays of a loop bounded by this stay in its frame


def reverse_mode(module: Module, fn_name: str, activity: Sequence[Activity | str], out_name: str, *,
                 cache: CacheMode | str = "auto", noalias: bool = False,
                 success_codes: Sequence[int] | None | object = REGISTERED,
                 counts: str | None = "define", extents: dict[int, Extent] | None = None,
                 heap: _heap.Heap | None = None, no_need: Sequence[int] = (),
                 vector_library: VectorLibrary | None = None, threads: Threads | None = None,
                 park: bool = True, parallel: ParallelUpdates = ParallelUpdates.AUTO,
                 memory: Memory = TAPE, guard_products: bool = False,
                 split_entries: bool = False, kept: Sequence[int] = (),
                 runtime: str = "define") -> Gradient:
    """Add `out_name`, the reverse-mode gradient of `fn_name` (see docs/internals.md).

    activity: an Activity (or its string "const", "dup", "active") per parameter of the primal.
    cache: a CacheMode (or its string): "auto" recomputes cheap values analysis proves safe to
    recompute and tapes expensive ones (divisions, math calls) in loops; "minimal" recomputes all
    it safely can (the smallest tape); "always" caches every needed value.
    noalias: the caller guarantees that distinct pointer parameters do not overlap.
    success_codes: the integer return values that are successes (None: every return); by default
    those registered with rules.convention.register_success_codes.
    extents: {param index: Extent} for pointer parameters whose memory extent is known;
    stores into them can be undone in the reverse sweep instead of taping the loads they clobber.
    counts: "define" or "declare" the global `<out_name>.tape_counts` where each call leaves the
    iteration counts of its taped loops (`explain` reads it), or None for no such global.
    no_need: indices of "dup" parameters whose final primal contents the caller does not need
    (DuplicatedNoNeed); their stores may be skipped (common/noneed.py).
    heap: where the gradient's tape and scratch memory come from (runtime.heap.Heap; None: the
    one heap.register_heap named last, libc malloc / realloc / free unless changed).
    vector_library: a vector_math.VectorLibrary the derivative rules' own math calls may use
    once LLVM vectorizes their loop (None: scalar calls only).
    threads: a shadow_updates.Threads when the function runs as many threads at once (a GPU
    kernel): shadow updates other threads may make too are atomic or privatised.
    park: keep the tape arrays in a workspace global between calls (False: free them).
    parallel: how the reverse sweeps of parallel loops add into shadows several iterations
    update (rules.parallel.ParallelUpdates; transforms/reverse/parallel/parallel_private.py).
    memory: checkpoint.budget.Memory: TAPE keeps every loop's full tape; a budget outlines the
    time loops that qualify and reverses them from snapshots (checkpoint/, docs/checkpointing.md).
    guard_products: guard every product of an adjoint and a primal value by the strong zero
    (rules/partials.py), as in a module that tests a float for NaN; by default products are
    guarded only in such modules.
    split_entries: add `<out_name>.aug`, `.rev` and `.free` instead of one function: the forward
    sweep keeps its tape for reverse sweeps run any number of times (public_split.py).
    kept (split_entries only): indices of pointer parameters whose memory the caller keeps
    unchanged from the forward sweep to every reverse sweep, and that no other parameter points
    into (Enzyme's "modified between" false); those the function does not write are loaded again
    in the reverse sweep instead of taped.
    runtime: "define" puts every runtime helper the gradient calls in the module; "declare"
    only declares those the host compiles once per process (runtime/shared.py).
    Returns the Gradient; its `layout` (report.TapeLayout) says what the tape holds.
    """
    if guard_products:
        module.facts[NAN_TESTS] = True
    tests_nan(module)     # on the input module, before any guard is emitted (rules/finite.py)
    set_runtime(module, runtime)
    written = written_params(module.functions[fn_name])
    cache = cache_mode(cache)
    activity = activities(activity)
    if any(activity[i] is not Activity.DUP for i in no_need):
        raise ValueError("no_need names parameters that are not 'dup'")
    if success_codes is REGISTERED:
        success_codes = registered_success_codes()
    module.heap = heap if heap is not None else _heap.registered()
    module.facts[UPDATES] = ParallelUpdates(parallel)
    if split_entries:
        return _public_split(module, fn_name, activity, out_name, cache, success_codes, extents,
                             vector_library, written, memory, threads, kept)
    time_loops = outline_time_loops(module, fn_name, extents or {}, memory.budget,
                                    out_name if counts else "",
                                    versioned=memory.auto, noalias=noalias,
                                    cache=memory.cache, bandwidth=memory.bandwidth) \
        if memory.checkpoints and threads is None else []
    g, fwd, rev = synthesize(module, fn_name, activity, out_name, cache, noalias, success_codes, False,
                             extents, no_need, threads)
    if time_loops:
        checkpoint_status(g, rev.final_ret)
    snapshot(g, fwd)
    g.splice(rev.put_back_marker, lambda b: put_back(g, b))
    if counts:
        record_counts(g, fwd, counts)
    g.layout = layout(g)
    g.layout.counts_symbol = g.counts_symbol
    g.layout.checkpoints = time_loops
    g.layout.written = written
    combine(g, fwd, park)
    drop(fwd, g.unneeded)
    worklist = module.pending.setdefault(DERIVED, [])
    if worklist and threads is not None:
        raise _not_inlined(g, worklist[0][0], "a function that runs as many threads "
                           "differentiates only code inlined into it")
    while worklist:
        callee, act, aug, rev_name = worklist.pop()
        if not module.functions[aug].is_declaration if aug in module.functions else False:
            continue
        if time_loop(module, callee) is not None:
            tl = time_loop(module, callee)
            step = step_gradient(module, tl.step, act, cache, success_codes, extents, noalias)
            emit_split(module, tl, act, aug, rev_name, step)
            continue
        gs, fs, rs = synthesize(module, callee, list(act), aug + ".combined", cache, False, success_codes, True)
        gs.splice(rs.put_back_marker, lambda b: None)
        split(gs, fs, rs, aug, rev_name)
    g.layout.updates = derive_parallel_bodies(module, cache, success_codes)
    chain_releases(module, out_name)
    use_vector_variants(module, vector_library)
    place_helpers(module)
    return g


def _public_split(module, fn_name, activity, out_name, cache, success_codes, extents,
                  vector_library, written, memory, threads, kept=()) -> Gradient:
    if memory.checkpoints or threads is not None:
        raise UnsupportedError("split mode keeps the whole tape: no memory budget, no threads")
    kept = frozenset(kept) - written if written is not None else frozenset()
    g, fwd, rev = synthesize(module, fn_name, activity, out_name, cache, False, success_codes,
                             True, extents, keep_frame=True, kept=kept)
    g.splice(rev.put_back_marker, lambda b: None)
    public_split.check(g)
    if module.pending.get(DERIVED) or module.pending.get(PARALLEL):
        raise UnsupportedError("split mode: the kernel calls a function that is not inlined or "
                               "runs a parallel loop; use autodiff")
    g.layout = layout(g)
    g.layout.written = written
    public_split.keep_tape(g, rev)
    split(g, fwd, rev, out_name + ".aug.0", out_name + ".sweep", local_frame=True)
    public_split.entry_points(g, out_name, out_name + ".aug.0", out_name + ".sweep")
    use_vector_variants(module, vector_library)
    place_helpers(module)
    return g


def step_gradient(module, step, act, cache, success_codes, extents, noalias) -> str:
    """The gradient of a checkpointed loop's step as one function (forward then reverse, the
    tape of one step), for `act`; checkpoint/emit.py calls it right after restoring the step's
    state, so values the step loads are loaded again rather than taped, as in the kernel's own
    gradient. Its tape arrays are parked between calls. The arrays are left as its reverse
    sweep leaves them (the checkpointed loop restores its state before the next step)."""
    name = f"{step}.grad." + "".join(a.value[0] for a in act)
    if name in module.functions:
        return name
    gs, fs, rs = synthesize(module, step, list(act), name, cache, noalias, success_codes, False,
                            extents)
    gs.splice(rs.put_back_marker, lambda b: None)
    combine(gs, fs)
    drop(fs, gs.unneeded)
    gs.fn.prefix = "define internal"
    return name


def derive_parallel_bodies(module, cache, success_codes) -> list:
    """The split gradients of parallel loop bodies (parallel_launch.py), their shadow updates
    safe on many threads; a body differentiates only code inlined into it. Returns how each
    shadow update is made (shadow_updates.Update), for `explain`."""
    updates = []
    for body in module.pending.pop(PARALLEL, []):
        name = body.aug if body.fused else body.aug + ".combined"
        gs, fs, rs = synthesize(module, body.name, list(body.activity), name, cache,
                                body.noalias, success_codes, not body.fused, threads=body.threads,
                                keep_frame=not body.fused)
        if module.pending.get(DERIVED):
            raise _not_inlined(gs, module.pending[DERIVED][0][0], "a parallel loop "
                               "differentiates only code inlined into it")
        check_deterministic(body.name, gs.updates, body.mode)
        updates += reported(body, gs.updates.report)
        gs.splice(rs.put_back_marker, lambda b: None)
        if body.fused:      # both sweeps in one function, run by each task (parallel_launch.py)
            combine(gs, fs, park=True)
            per_thread_workspace(gs)
            gs.fn.prefix = "define internal"
        else:
            split(gs, fs, rs, body.aug, body.rev)
    return updates


def _not_inlined(g, callee, why) -> UnsupportedError:
    """The refusal of a call to `callee` in g's primal that was not inlined, at the call."""
    site = next((i for i in g.primal.instructions() if i.opcode == "call" and
                 i.callee_name == callee), None)
    what = f"the call to `{callee}` is not inlined: {why}"
    return g.unsupported(what, site) if site is not None else UnsupportedError(what)


def synthesize(module, fn_name, activity, out_name, cache, noalias, success_codes, is_split,
               extents=None, no_need=(), threads=None, keep_frame=False, kept=frozenset()):
    """Prepare the primal, then build its gradient: the forward sweep, the reverse sweep, and
    what joins them. Returns (Gradient, ForwardSweep, ReverseSweep)."""
    primal = module.functions[fn_name]
    prepare(REVERSE_PREPARE, primal, noalias, extents)
    g = Gradient(module, primal, activity, out_name, cache, noalias, split=is_split, extents=extents,
                 success_codes=success_codes, no_need=no_need)
    g.keep_frame = g.tape.kept_in_frame = keep_frame
    g.kept = kept
    if threads is not None:
        g.updates = ShadowUpdates(g, threads)
        g.fixed_trips = {lp: k for lp in g.loops.loops if lp.parent is None
                         and (k := constant_trip_bound(lp, g.dom) or 0) and k <= MAX_FIXED_TRIPS}
    fwd = ForwardSweep(g)
    g.fwd = fwd
    reaching = blocks_reaching_success(module, g.dom, g.preds, success_codes)
    fwd.counted = {lp for lp in g.loops.loops if lp.header in reaching}
    g.exact_trips = {lp: exact_trip(lp, reaching) for lp in g.loops.loops}
    g.fused = fused_loops(g, reaching)
    g.gated = gated_loops(g)
    g.sweep = Sweep.FORWARD
    fwd.clone_blocks()
    g.sweep = Sweep.REVERSE
    rev = ReverseSweep(g, fwd)
    rev.build(reaching)
    fill_recurrences(g)
    emit_undos(g)
    g.sweep = Sweep.FORWARD
    fwd.finish(rev)
    return g, fwd, rev


def split(g, fwd, rev, aug_name, rev_name, local_frame=False) -> None:
    """Cut a synthesized gradient into F.aug (forward, returns its frame) and F.rev (reverse).
    local_frame (with keep_frame): the forward works on a stack copy of the frame (_local_frame)."""
    module = g.module
    module.items.remove(g.fn)
    del module.functions[g.fn.name]
    n = len(g.primal.params) + len(g.shadow_params)
    frame_out = Argument(T.ptr, "frame.out", "", n)
    aug = Function(aug_name, g.fn.ret_type, g.params[:n] + [frame_out], prefix="define internal")
    frame_param = Argument(T.ptr, "frame.in", "", len(g.params))
    revf = Function(rev_name, T.void, g.params + [frame_param], prefix="define internal")
    for f in (aug, revf):
        f.generated = True
        module.add_function(f)
    # forward: malloc the frame, initialize it, run, and hand the frame to the caller
    entry = Block("entry", aug)
    b = MathBuilder(module, entry)
    exit_field = g.tape.frame.field(T.i32) if len(fwd.success_exits) > 1 else None
    g.tape.finalize(None)     # after the last field: the frame's size is now known
    size = ConstInt(T.i64, max(g.tape.frame.size, 8))
    head = [entry]
    if g.keep_frame:
        frame, b, head = _kept_frame(g, aug, b, frame_out, size)
    else:
        frame = _heap.allocate(b, size)
    b.br(g.init_block)
    MathBuilder(module, g.init_block).br(fwd.fb[g.primal.entry])
    done_blocks = []
    for k, (blk, primal_ret) in enumerate(fwd.success_exits):
        done = Block(f"done.{k}", aug)
        db = MathBuilder(module, done)
        if exit_field is not None:
            g.tape.store(db, ConstInt(T.i32, k), exit_field)
        db.store(frame, frame_out)
        status = rev.status_slot
        db.ret(g.tape.load(db, status) if status is not None else None)
        blk.terminator.replace_successor(rev.rb[primal_ret], done)
        done_blocks.append(done)
    aug.blocks = head + [g.init_block] + [x for x in g.fn.blocks if g.sweep_of[x] is Sweep.FORWARD and
                                          x not in (g.alloca_block, g.init_block)] + done_blocks
    replace_uses(aug, g.tape.frame.pointer,
                 _local_frame(g, aug, frame, size) if g.keep_frame and local_frame else frame)
    # reverse: adjoint slots, then the reverse of the return block the forward left by
    rb = MathBuilder(module, g.alloca_block)
    targets = [rev.rb[r] for _, r in fwd.success_exits]
    if not targets:       # every return fails: the forward part never hands a frame over
        rb.ret()
    elif exit_field is None:
        rb.br(targets[0])
    else:
        which = g.tape.load(rb, exit_field)
        rb.switch(which, targets[0], [(ConstInt(T.i32, k), t) for k, t in enumerate(targets) if k])
    revf.blocks = [g.alloca_block] + [x for x in g.fn.blocks if g.sweep_of[x] is Sweep.REVERSE]
    replace_uses(revf, g.tape.frame.pointer, frame_param)
    freef = free_function(g, aug_name)
    extra = [drop_function(g, aug_name)] if g.keep_frame else []
    for f in (aug, revf, freef, *extra):
        for blk in f.blocks:
            blk.function = f


def _frame_function(g, name):
    """A generated `name(ptr frame)` with an entry block: (the function, its parameter, a builder
    there)."""
    param = Argument(T.ptr, "frame", "", 0)
    f = Function(name, T.void, [param], prefix="define internal")
    f.generated = True
    blk = Block("entry", f)
    f.blocks = [blk]
    return f, param, MathBuilder(g.module, blk)


def free_function(g, aug_name):
    """F.free: release a frame F.aug returned when its reverse will never run (the caller
    failed later): callee frames it holds, its allocations, its tape, the frame itself."""
    f, param, b = _frame_function(g, free_name(aug_name))
    g.tape.release_children(b, failed=True)
    g.tape.free_allocations(b)
    for hook in g.tape.on_release:
        hook(b, True)
    if not g.keep_frame:
        for e in g.tape.heap_entries():
            _heap.free(b, g.tape.load(b, e.storage))
        _heap.free(b, g.tape.frame.pointer)
    b.ret()
    replace_uses(f, g.tape.frame.pointer, param)
    g.module.add_function(f)
    return f


def drop_function(g, aug_name):
    """F.drop: free a kept frame (split(keep_frame)) and the tape arrays it keeps."""
    f, param, b = _frame_function(g, drop_name(aug_name))
    for fl in g.tape.persistent_fields():
        if fl.type == T.ptr:
            _heap.free(b, g.tape.load(b, fl))
    _heap.free(b, g.tape.frame.pointer)
    b.ret()
    replace_uses(f, g.tape.frame.pointer, param)
    g.module.add_function(f)
    return f


def _kept_frame(g, aug, b, frame_out, size):
    """The frame of a split(keep_frame) forward: *frame_out when a previous call left one there
    (its tape arrays and capacities kept: the frame setup leaves those fields alone), else a
    zeroed new one stored there. Returns (frame, builder at the end, the aug's first blocks)."""
    fresh, ready = Block("frame.fresh", aug), Block("frame.ready", aug)
    old = b.load(T.ptr, frame_out)
    b.cbr(b.icmp("eq", old, Constant(T.ptr, "null")), fresh, ready)
    fb = MathBuilder(g.module, fresh)
    new = _heap.allocate(fb, size)
    fb.call("llvm.memset.p0.i64", T.void, [new, ConstInt(T.i8, 0), size, ConstInt(T.i1, 0)])
    fb.store(new, frame_out)
    fb.br(ready)
    rb = MathBuilder(g.module, ready)
    frame = rb.phi(T.ptr, [(old, b.block), (new, fresh)])
    kept = {f.offset for f in g.tape.persistent_fields()}
    pointer = g.tape.frame.pointer
    g.init_block.instructions = [i for i in g.init_block.instructions
                                 if not (i.opcode == "store" and _field_offset(i.ops[1], pointer) in kept)]
    return frame, rb, [b.block, fresh, ready]


def _local_frame(g, aug, frame, size):
    """A kept frame lives on the heap and escapes (the caller holds it), so LLVM keeps every tape
    counter and array pointer in memory, loaded and stored on each iteration, and vectorizes
    nothing. The forward sweep works on a stack copy instead (promoted to registers), copied in
    after the frame setup and back to the heap frame before each return."""
    local = frame_alloca(size.value)
    aug.blocks[0].insert(0, local)
    ready = aug.blocks[2]
    before_terminator(g.module, ready, lambda b: _copy(b, local, frame, size))
    for blk in aug.blocks:
        t = blk.terminator
        if t is not None and t.opcode == "ret":
            before_terminator(g.module, blk, lambda b: _copy(b, frame, local, size))
    return local


def _copy(b, dst, src, size):
    b.call("llvm.memcpy.p0.p0.i64", T.void, [dst, src, size, ConstInt(T.i1, 0)])


def _field_offset(p, frame):
    if p is frame:
        return 0
    if getattr(p, "opcode", "") == "getelementptr" and p.ops[0] is frame and \
            isinstance(p.ops[1], ConstInt):
        return p.ops[1].value
    return None


def combine(g, fwd, park=True) -> None:
    """Close the combined gradient: the frame is an alloca in the entry block; tape arrays are
    parked in a workspace global between calls (`<name>.release()` frees them), unless not park."""
    slot = f"{g.fn.name}.workspace"
    parks = park and bool(g.tape.persistent_fields())
    if parks:
        g.module.items.append(f'@"{slot}" = internal global ptr null, align 8')
    g.tape.finalize(slot if parks else None)
    if parks:
        g.tape.release_function(slot, f"{g.fn.name}.release")
    b = MathBuilder(g.module, g.alloca_block)
    frame = g.alloca_block.insert(0, frame_alloca(g.tape.frame.size))
    b.br(g.init_block)
    MathBuilder(g.module, g.init_block).br(fwd.fb[g.primal.entry])
    replace_uses(g.fn, g.tape.frame.pointer, frame)


def frame_alloca(size: int):
    return Instruction("alloca", T.ptr, [], name="frame", source_type=T.ArrayType(max(size, 8), T.i8),
                       align=16)
