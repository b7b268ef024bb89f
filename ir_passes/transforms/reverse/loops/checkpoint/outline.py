"""Outline a time loop: one iteration becomes `K.ckpt.N.step`, the loop a call to `K.ckpt.N`.

A top-level loop qualifies when its body overwrites memory it reads (state the reverse sweep
would otherwise tape every iteration), and that memory is the data of parameters whose extent
is known or arrays allocated before the loop (with their size), so a snapshot can copy it.
Loop-carried integers (the counters) travel in a small buffer, the *carry*: its first 8 bytes
say whether the loop goes on (1) or which way it left (0: by its first exit, k + 1: by its
exit k >= 1, such as an error path), then one 8-byte slot per header phi, one per value used
after the loop, the segment length k, then a bound on the loop's steps when it is known on entry
(0 when not; the schedule's forward reads it). The step takes the function's parameters, the
values defined before the loop that the body uses, and the carry; it runs one iteration and
returns, or, for a segmented loop (memory="auto", version.py), up to k iterations: the header's
phis stay phis in the step and a counter leaves after the k-th, so the step's own gradient
tapes a whole segment and the schedule treats a segment as one step.

Loops it cannot take keep the full tape: several entries, values of the body used after the
loop (an exit's phi taking different values from different exiting blocks included),
loop-carried floats or pointers, writes to memory of unknown extent, or memory the body reads
that code after the loop overwrites.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .....analysis.alias import alias_analysis
from .....analysis.dominators import dominators
from .....analysis.loops import loop_info
from .....analysis.types import roots
from .....ir import types as T
from .....ir.builder import MathBuilder
from .....ir.instructions import Instruction
from .....ir.module import Block, Function
from .....ir.values import Argument, Constant, ConstInt, Global
from .....rules.parallel import launch_handle, lookup_parallel
from .....rules.effects import (allocation_size, allocator_or_inactive, is_allocation, may_write,
                               writes_nothing)
from ....common.extent import Extent
from ....common.markers import drop_stray_markers
from .step_local import is_addressing, step_local_blocks, through
from ..trips import NONE, bound_steps
from .version import (STAT_FIELDS, add_choice, exact_steps, recompute_model, step_intensity,
                      store_segment, trip_estimate)

KEY = "checkpoint"   # this transform's key in module.derived
SLOT = 8             # bytes per carried value (and for the continue flag)
SHARE = 4            # a segment's tape may take 1 / SHARE of the last-level cache (version.py)


@dataclass
class TimeLoop:
    """A loop outlined for checkpointing: `name` runs all its steps, `step` one of them."""
    name: str
    step: str
    regions: list                 # the memory a snapshot copies: (step parameter, Extent) for
    #                               an array parameter, (pointer parameter, size parameter or
    #                               constant) for an allocation made before the loop
    carry_bytes: int
    nparams: int                  # parameters of `name` and `step` (the carry last)
    budget: int
    locations: list = field(default_factory=list)   # [(file, line)] of the loop header
    stats: str = ""               # global of the loop's figures (version.py's STAT_FIELDS)
    versioned: bool = False       # kept beside its call: the full tape when it fits (version.py)
    stat_fields: tuple = STAT_FIELDS
    in_place: bool = False        # the step may run on a snapshot's memory (emit.py): the state's
    #                               memory is reached only through the regions' own pointers
    status: bool = False          # the step returns an i32 status (0), which its gradient makes
    #                               an error when a parallel launch in it failed
    share: int = 0                # segmented: the bytes a segment's tape may take (the step runs
    #                               k = share / S iterations, version.py); 0: one iteration
    cache: int = 0                # the last-level cache's bytes (memory="auto"'s choice)
    bandwidth: int = 0            # the memory's bytes per second (memory="auto"'s choice)
    recompute_ps: int = 0         # version.recompute_model: picoseconds per tape byte
    traffic_ps: int = 0


def outline_time_loops(module, fn_name: str, extents: dict, budget: int,
                       out_name: str = "", versioned: bool = False,
                       noalias: bool = False, cache: int = 0,
                       bandwidth: int = 0) -> list[TimeLoop]:
    """Outline every qualifying top-level loop of `fn_name`; returns them (also recorded in
    module.derived[KEY] by the name of the function that runs their steps). With `out_name`,
    each loop's reverse leaves its figures in the global `<out_name>.ckpt.<k>` (version.py's
    STAT_FIELDS), which the module declares and the host defines (as the tape counts).
    `versioned` (memory="auto"): a loop with a trip bound stays beside its call, and the kernel
    takes it (its full tape) when that tape's estimate fits the budget (version.py).
    `noalias`: distinct pointer parameters do not overlap (then a step may run on a snapshot's
    memory in place, TimeLoop.in_place). `cache` (memory="auto"): the last-level cache's bytes;
    the loops are segmented, k steps a call with tapes in a quarter of it (version.py).
    `bandwidth` (bytes / s): with `cache`, a versioned loop keeps its full tape only when it fits
    half the cache or recomputing costs more than the traffic (version.recompute_model)."""
    fn = module.functions[fn_name]
    out = []
    kept: set = set()          # headers of loops kept beside their call
    while True:
        for lp in [x for x in loop_info(fn).loops if x.parent is None and id(x.header) not in kept]:
            plan = _qualifies(module, fn, lp, extents)
            if plan is None:
                continue
            name = f"{fn_name}.ckpt.{len(module.derived.get(KEY, {}))}"
            stats = f"{out_name}.ckpt.{len(out)}" if out_name else ""
            trips = trip_estimate(fn, lp)
            bound = trips[1] if versioned and not plan[5] else None   # values out: no version
            if bound is not None:
                kept.add(id(lp.header))
            model = (bandwidth,) + (recompute_model(step_intensity(fn, lp), bandwidth)
                                    if bandwidth else (0, 0))
            tl = _outline(module, fn, lp, plan, name, budget, stats, bound, noalias, trips, cache,
                          model)
            module.derived.setdefault(KEY, {})[name] = tl
            out.append(tl)
            break
        else:
            return out


def time_loop(module, name: str) -> TimeLoop | None:
    return module.derived.get(KEY, {}).get(name)


def _qualifies(module, fn, lp, extents):
    """(preheader, exit blocks, carried phis, regions, step-local blocks, values out) when loop lp
    can be checkpointed, else None."""
    preds = fn.predecessors()
    outside = [p for p in preds[lp.header] if p not in lp.blocks]
    exits = [x for x in fn.blocks if x not in lp.blocks and any(p in lp.blocks for p in preds[x])]
    if len(outside) != 1 or not exits:
        return None
    outs = _values_out(fn, lp)
    if outs is None:
        return None
    for x in exits:     # an exit's phi choosing by the exiting block (an error's message)
        for phi in x.phis():
            ins = [v for v, b in zip(phi.ops, phi.blocks) if b in lp.blocks]
            if len({_same(v) for v in ins}) > 1:
                if not (_fits_slot(phi) or phi.type.is_ptr and
                        all(isinstance(v, (Constant, Global)) for v in ins)):
                    return None
                outs.append(phi)
    carried = lp.header.phis()
    if any(not isinstance(p.type, T.IntType) or p.type.bits > 64 for p in carried):
        return None
    local = step_local_blocks(fn, lp)
    regions = _regions(module, fn, lp, extents, local)
    if not regions:
        return None
    return outside[0], exits, carried, regions, local, outs


def _values_out(fn, lp):
    """The integers computed in the body that code after the loop uses (an error path printing
    a count), which the step leaves in the carry (as it does an exit's phi that chooses by the
    exiting block, _qualifies); None when another value is used after it."""
    out = []
    for b in fn.blocks:
        if b in lp.blocks:
            continue
        for i in b.instructions:
            for o in i.ops:
                if isinstance(o, Instruction) and o.block in lp.blocks and all(o is not x for x in out):
                    if not _fits_slot(o) or o in lp.header.phis():
                        return None
                    out.append(o)
    return out


def _fits_slot(v) -> bool:
    """An integer a carry slot holds. Not a pointer: its shadow would not travel with it
    (a pointer constant, an exception's message, does: _qualifies)."""
    return isinstance(v.type, T.IntType) and v.type.bits <= 64


def _same(v):
    """A key equal for the same value (constants by their value)."""
    return (str(v.type), v.value) if isinstance(v, ConstInt) else id(v)


def _snapshotable(r, lp, extents) -> bool:
    """Memory a snapshot can copy: an array parameter, or an allocation made before the loop."""
    return isinstance(r, Argument) and r.index in extents or \
        isinstance(r, Instruction) and r.block not in lp.blocks and is_allocation(r)


def _regions(module, fn, lp, extents, local):
    """The parameters whose memory the body writes and reads, or None when a write or a later
    overwrite rules the loop out. `local`: the step-local blocks (step_local.py); a call given
    one reaches the memory whose pointers the loop stores into it."""
    alias = alias_analysis(fn)
    written: dict = {}
    for inst, ptr in alias.writes:
        if inst.block not in lp.blocks:
            continue
        if ptr is not None:
            for r in alias.roots(ptr):
                if not (_local(r, lp) or id(r) in local):
                    if not _snapshotable(r, lp, extents):
                        return None
                    written[id(r)] = r
        elif inst.opcode == "call":
            for o in inst.ops:
                for r in (through(roots(o), local, lp) if o.type.is_ptr else ()):
                    if _snapshotable(r, lp, extents):
                        written[id(r)] = r
                    elif not (_local(r, lp) or isinstance(r, Argument) or _function(module, r)):
                        return None
        else:
            return None
    read = _read_roots(lp, local)
    if not any(id(r) in written for r in read):
        return None
    for inst, ptr in alias.writes:   # code after the loop must not change what the body reads
        if inst.block in lp.blocks or not alias.reachable(lp.header, inst.block):
            continue
        rs = alias.roots(ptr) if ptr is not None else [None]
        for r in rs:
            if r is None or id(r) not in written:
                if r is None or any(alias.may_alias_roots(r, x) for x in read):
                    return None
    params = sorted(r.index for r in written.values() if isinstance(r, Argument))
    allocs = [r for r in written.values() if not isinstance(r, Argument)]
    return [(k, extents[k]) for k in params] + [(r, allocation_size(r)) for r in allocs]


def _local(r, lp) -> bool:
    """Memory made inside the loop (a temporary of one step, a launch's schedule or saved
    thread state), or no memory (null)."""
    if isinstance(r, Constant) and getattr(r, "text", "") == "null":
        return True
    return isinstance(r, Instruction) and r.block in lp.blocks and \
        (r.opcode == "alloca" or is_allocation(r) or
         r.opcode == "call" and launch_handle(r.callee_name))


def _function(module, r) -> bool:
    """Is r a function (a launch's task), not memory?"""
    return isinstance(r, Global) and r.name in module.functions


def _read_roots(lp, local) -> list:
    out = []
    for b in lp.blocks:
        for i in b.instructions:
            if i.opcode == "load":
                out += roots(i.ops[0])
            elif i.opcode == "call" and not writes_nothing(i.callee_name) and \
                    not allocator_or_inactive(i.callee_name) and may_write(i):
                out += [r for o in i.ops if o.type.is_ptr for r in through(roots(o), local, lp)]
    return out


def _views_apart(fn, regions, live) -> bool:
    """Is the state reached only through its regions' own pointers? At most one region is a
    parameter (the others are allocations of the kernel, apart from everything), and no other
    value the step takes points into a region."""
    if sum(isinstance(r, int) for r, _ in regions) > 1:
        return False
    own = {id(r) for r, _ in regions if not isinstance(r, int)}
    state = own | {id(fn.params[r]) for r, _ in regions if isinstance(r, int)}
    for v in live:
        if v.type.is_ptr and id(v) not in own and any(id(x) in state for x in roots(v)):
            return False
    return True


def _live_ins(fn, lp, local) -> list:
    """Values defined before the loop that the body uses (not the step-local blocks and their
    addresses, which the step makes itself)."""
    seen, out = set(), []
    for b in fn.blocks:
        if b not in lp.blocks:
            continue
        for i in b.instructions:
            for k, o in enumerate(i.ops):
                if i in lp.header.phis() and i.blocks[k] not in lp.blocks:
                    continue
                if isinstance(o, Instruction) and o.block not in lp.blocks and id(o) not in seen \
                        and not is_addressing(o, local):
                    seen.add(id(o))
                    out.append(o)
    return out


def _outline(module, fn, lp, plan, name, budget, stats, bound, noalias, trips, cache,
             model=(0, 0, 0)) -> TimeLoop:
    pre, exits, carried, regions, local, outs = plan
    live = _live_ins(fn, lp, local)
    in_place = noalias and _views_apart(fn, regions, live)
    for r in regions:     # an allocation's pointer and size travel to the step too
        for v in r if isinstance(r[0], Instruction) else ():
            if isinstance(v, Instruction) and v.block not in lp.blocks and all(v is not x for x in live):
                live.append(v)
    params = [Argument(a.type, a.name or f"arg{k}", "", k) for k, a in enumerate(fn.params)]
    params += [Argument(v.type, f"live.{j}", "", len(params) + j) for j, v in enumerate(live)]
    carry = Argument(T.ptr, "carry", "", len(params))
    params.append(carry)
    status = any(i.opcode == "call" and lookup_parallel(i.callee_name) is not None
                 for x in lp.blocks for i in x.instructions)
    step = Function(name + ".step", T.i32 if status else T.void, params, prefix="define internal")
    step.generated = True
    _clone_body(module, fn, lp, step, params, live, carried, carry, exits, local, outs, cache > 0)
    module.add_function(step)
    runner = _runner(module, name, step)
    carry_bytes = SLOT * (3 + len(carried) + len(outs))
    call_block, carry_slot = _replace_loop(module, fn, lp, pre, exits, carried, live, runner,
                                           carry_bytes, keep=bound is not None, trips=trips,
                                           outs=outs)
    first = next((i for i in lp.header.instructions if i.dbg), None)
    index = {id(v): k for k, v in enumerate(list(fn.params) + live)}
    regions = [(a, b) if isinstance(b, Extent) else (index[id(a)], index.get(id(b), b))
               for a, b in regions]
    tl = TimeLoop(name, step.name, regions, carry_bytes, len(params), budget,
                  module.location(first) if first is not None else [], stats,
                  versioned=bound is not None, in_place=in_place, status=status,
                  share=cache // SHARE, cache=cache, bandwidth=model[0],
                  recompute_ps=model[1], traffic_ps=model[2])
    if stats:
        module.items.append(f'@"{stats}" = external global [{len(STAT_FIELDS)} x i64]')
    values = list(fn.params) + live + [carry_slot]
    store_segment(module, call_block, values, tl)
    if bound is not None:
        add_choice(module, fn, lp, pre, call_block, values, tl, bound)
    return tl


def _clone_body(module, fn, lp, step, params, live, carried, carry, exits, local, outs,
                segmented) -> None:
    vmap: dict = {id(a): p for a, p in zip(fn.params, params)}
    vmap.update({id(v): params[len(fn.params) + j] for j, v in enumerate(live)})
    entry = Block("entry", step)
    for x in fn.blocks:       # the step's own blocks (step_local.py) and their addresses
        for i in x.instructions if x not in lp.blocks else ():
            if i.opcode != "store" and is_addressing(i, local):
                c = i.copy()
                c.ops = [vmap.get(id(o), o) for o in c.ops]
                vmap[id(i)] = c
                entry.append(c)
    b = MathBuilder(module, entry)
    for j, phi in enumerate(carried):
        slot = b.gep(T.i8, carry, [ConstInt(T.i64, SLOT * (1 + j))])
        vmap[id(phi)] = b.load(phi.type, slot, f"carried.{j}")
    order = [x for x in fn.blocks if x in lp.blocks]
    order.remove(lp.header)
    order.insert(0, lp.header)
    bmap = {id(x): Block(x.name, step) for x in order}
    seg = _segment(b, bmap[id(lp.header)], carried, vmap, carry, len(outs)) if segmented else None
    b.br(bmap[id(lp.header)])
    copies = []
    for x in order:
        for i in x.instructions:
            if x is lp.header and i in carried:
                continue
            c = i.copy()
            vmap[id(i)] = c
            bmap[id(x)].append(c)
            copies.append(c)
    leave = {}
    dom = dominators(fn)
    for k, x in enumerate(exits):
        leave[id(x)] = Block(f"step.exit.{k}", step)
        lb = MathBuilder(module, leave[id(x)])
        lb.store(ConstInt(T.i64, k + 1 if k else 0), carry)
        for j, v in enumerate(outs):      # the values code after the loop uses, where defined
            at = lb.gep(T.i8, carry, [ConstInt(T.i64, SLOT * (1 + len(carried) + j))])
            if v.block is x:              # an exit's phi: the same choice by the step's blocks
                ins = [(vmap.get(id(o), o), pb) for o, pb in zip(v.ops, v.blocks) if pb in lp.blocks]
                phi = Instruction("phi", v.type, [o for o, _ in ins],
                                  blocks=[bmap[id(pb)] for _, pb in ins])
                leave[id(x)].insert(0, phi)
                phi.block = leave[id(x)]
                lb.store(phi, at)
            elif v.block in lp.blocks and dom.dominates(v.block, x):
                lb.store(vmap[id(v)], at)
        lb.ret(_ok(step))
    tails = []
    for c in copies:
        c.ops = [vmap.get(id(o), o) for o in c.ops]
        c.blocks = [bmap.get(id(x), x) for x in c.blocks]
        if c.is_terminator:
            src = c.block
            new_targets = []
            for t in c.targets:
                new_targets.append(_edge(module, step, t, lp, bmap, leave, carried, vmap, carry,
                                         src, tails, seg))
            c.targets = new_targets
            c.cases = [(k, _edge(module, step, t, lp, bmap, leave, carried, vmap, carry, src, tails,
                                 seg)) for k, t in c.cases]
    step.blocks = [entry] + [bmap[id(x)] for x in order] + tails + list(leave.values())
    drop_stray_markers(step)    # a marker of a block the step takes as a parameter (not its own)


def _segment(b, header, carried, vmap, carry, nouts):
    """A segmented step's header phis: the carried values (from the carry on entry) and the
    count of iterations run; and the segment length k, loaded from the carry with b."""
    slot = b.gep(T.i8, carry, [ConstInt(T.i64, SLOT * (1 + len(carried) + nouts))])
    k = b.load(T.i64, slot, "segment")
    phis = []
    for phi in carried + [None]:
        t, v = (phi.type, vmap[id(phi)]) if phi is not None else (T.i64, ConstInt(T.i64, 0))
        new = Instruction("phi", t, [v], blocks=[b.block], name="seg.count" if phi is None else "")
        header.insert(len(phis), new)
        phis.append(new)
        if phi is not None:
            vmap[id(phi)] = new
    return phis, k


def _edge(module, step, target, lp, bmap, leave, carried, vmap, carry, src, tails, seg=None):
    """The block an edge of the body goes to in the step: the clone, the exit, or a back edge's
    block that stores the next carried values and returns (in a segmented step, once the
    segment's k-th iteration has run: else back to the header)."""
    if target not in lp.blocks:
        return leave[id(target)]
    if target is not lp.header:
        return bmap[id(target)]
    latch = next(k for k, v in bmap.items() if v is src)
    nexts = []
    for phi in carried:
        v = next(val for val, pb in zip(phi.ops, phi.blocks) if id(pb) == latch)
        nexts.append(vmap.get(id(v), v))
    blk = Block(f"step.next.{len(tails)}", step)
    tails.append(blk)
    b = MathBuilder(module, blk)
    if seg is not None:
        phis, k = seg
        count = b.add(phis[-1], ConstInt(T.i64, 1))
        for phi, v in zip(phis, nexts + [count]):
            phi.ops.append(v)
            phi.blocks.append(blk)
        done = Block(f"step.done.{len(tails)}", step)
        tails.append(done)
        b.cbr(b.icmp("slt", count, k), bmap[id(lp.header)], done)
        b = MathBuilder(module, done)
    for j, v in enumerate(nexts):
        b.store(v, b.gep(T.i8, carry, [ConstInt(T.i64, SLOT * (1 + j))]))
    b.store(ConstInt(T.i64, 1), carry)
    b.ret(_ok(step))
    return blk


def _ok(step):
    """The step's successful return value (none for a void step)."""
    return ConstInt(T.i32, 0) if step.ret_type == T.i32 else None


def _runner(module, name, step) -> Function:
    """K.ckpt.N: runs the steps until one leaves the loop (the primal of the outlined loop)."""
    params = [Argument(p.type, p.name, "", k) for k, p in enumerate(step.params)]
    f = Function(name, T.void, params, prefix="define internal")
    f.generated = True
    entry, loop, done = Block("entry", f), Block("loop", f), Block("done", f)
    MathBuilder(module, entry).br(loop)
    b = MathBuilder(module, loop)
    b.emit(Instruction("call", step.ret_type, list(params), callee=Global(T.ptr, step.name),
                       arg_attrs=["" for _ in params]))
    more = b.icmp("eq", b.load(T.i64, params[-1], "flag"), ConstInt(T.i64, 1))
    b.cbr(more, loop, done)
    MathBuilder(module, done).ret()
    f.blocks = [entry, loop, done]
    module.add_function(f)
    return f


def _replace_loop(module, fn, lp, pre, exits, carried, live, runner, carry_bytes, keep, trips,
                  outs):
    """The block that calls the runner in place of the loop, and the carry's stack slot. With
    `keep`, the loop stays (version.py branches to one or the other); else it is removed.
    `trips`: (exact count, bound) of the loop (version.trip_estimate); the count, else the bound,
    goes in the carry's last slot (0: unknown) for the schedule's forward (schedule.py); the
    segment length k before it is stored by version.store_segment."""
    alloca = Instruction("alloca", T.ptr, [], name=f"{runner.name}.carry",
                         source_type=T.ArrayType(carry_bytes, T.i8), align=8)
    fn.entry.insert(0, alloca)
    alloca.block = fn.entry
    blk = Block("ckpt." + runner.name.rsplit(".", 1)[-1], fn)
    b = MathBuilder(module, blk)
    for j, phi in enumerate(carried):
        b.store(phi.incoming(pre), b.gep(T.i8, alloca, [ConstInt(T.i64, SLOT * (1 + j))]))
    exact, bound = trips
    if exact is not None:
        steps = exact_steps(b, exact)
    elif bound is not None:            # NONE (no exit sure to fire) is unknown: 0
        steps = bound_steps(b, bound)
        steps = b.select(b.icmp("eq", steps, ConstInt(T.i64, NONE)), ConstInt(T.i64, 0), steps)
    else:
        steps = ConstInt(T.i64, 0)
    b.store(steps, b.gep(T.i8, alloca, [ConstInt(T.i64, carry_bytes - SLOT)]))
    args = list(fn.params) + live + [alloca]
    b.emit(Instruction("call", T.void, args, callee=Global(T.ptr, runner.name),
                       arg_attrs=["" for _ in args]))
    for j, v in enumerate(outs):       # the body's values that code after the loop uses
        w = b.load(v.type, b.gep(T.i8, alloca, [ConstInt(T.i64, SLOT * (1 + len(carried) + j))]))
        if v.block not in lp.blocks:   # an exit's phi: its entries from the loop take w
            v.ops = [w if pb in lp.blocks else o for o, pb in zip(v.ops, v.blocks)]
            continue
        for x in fn.blocks:
            for i in x.instructions if x not in lp.blocks else ():
                i.ops = [w if o is v else o for o in i.ops]
    if len(exits) == 1:
        b.br(exits[0])
    else:
        flag = b.load(T.i64, alloca, "left")
        b.switch(flag, exits[0], [(ConstInt(T.i64, k + 1), x) for k, x in enumerate(exits) if k])
    for x in exits:
        for phi in x.phis():
            v = next(v for v, pb in zip(phi.ops, phi.blocks) if pb in lp.blocks)
            kept = [(v2, pb) for v2, pb in zip(phi.ops, phi.blocks) if keep or pb not in lp.blocks]
            phi.ops = [v2 for v2, _ in kept] + [v]
            phi.blocks = [pb for _, pb in kept] + [blk]
    k = fn.blocks.index(lp.header)
    if keep:
        fn.blocks.insert(k, blk)
        return blk, alloca
    pre.terminator.replace_successor(lp.header, blk)
    fn.blocks = [x for x in fn.blocks if x not in lp.blocks]
    fn.blocks.insert(min(k, len(fn.blocks)), blk)
    return blk, alloca
