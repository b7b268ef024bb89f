"""The split gradient of an outlined time loop, from snapshots instead of a tape.

`N.aug` runs the steps and keeps snapshots (schedule.py: Revolve's placement when the carry
brings the step count, else the online schedule); its frame is the schedule. A step here is
one call of `N.step`: k iterations of a segmented loop (outline.py), the count of calls the
carry's bound over k. `N.rev` keeps the
state it was handed, then for each step t from the last: takes the latest snapshot, runs the
plain step forward from it up to t (placing binomial snapshots), and runs the step's gradient
(`N.step.grad.*`, driver.step_gradient: forward and reverse of that step, the tape of one step
only). When the snapshot is t's own and TimeLoop.in_place, the step's gradient runs on the
snapshot's memory (state.py's N.view) instead of a copy. Every step run again must leave the
loop as it did in the forward (the carry's flag: continue, or the forward's last exit); one
that does not (a failed allocation) stops the reverse: schedule.py's enzpy.ckpt.fail reports
the error to the host and the gradient returns an error status (or aborts, without a host's
report: rules/convention.py). At the
end `N.rev` puts the state back as it found it. The recomputed steps are the same function on
the same state, so the gradient equals the full tape's to the last bit.
"""
from __future__ import annotations

from ....ir.parser import parse_module
from ....options import Activity
from ....runtime.helpers import rewrite
from ..calls import free_name
from .schedule import ensure_schedule
from .state import add_state_functions

AUG = """
define internal void @{aug}({sig_aug}) {{
entry:
  %S = call i64 @{n}.bytes({ops})
  %kp = getelementptr i8, ptr {carry}, i64 {seg_at}
  %seg = load i64, ptr %kp
  %extra = sub i64 %seg, 1
  %segtape = mul i64 %extra, %S
  %over = icmp ugt i64 %segtape, {budget}
  %rest = sub i64 {budget}, %segtape
  %room = select i1 %over, i64 0, i64 %rest
  %f = call ptr @enzpy.ckpt.frame(i64 %S, i64 %room, ptr @"{n}.pool")
  store ptr %f, ptr %fo
  %tp = getelementptr i8, ptr {carry}, i64 {trips_at}
  %trips = load i64, ptr %tp
  %tm1 = sub i64 %trips, 1
  %tq = udiv i64 %tm1, %seg
  %segs0 = add i64 %tq, 1
  %known = icmp sgt i64 %trips, 0
  %segs = select i1 %known, i64 %segs0, i64 0
  call void @enzpy.ckpt.trips(ptr %f, i64 %segs)
  br label %loop
loop:
  %k = phi i64 [ 0, %entry ], [ %k1, %run ]
  %w = call i1 @enzpy.ckpt.wants(ptr %f, i64 %k)
  br i1 %w, label %save, label %run
save:
  %dst = call ptr @enzpy.ckpt.push(ptr %f, i64 %k)
  call void @{n}.save({ops}, ptr %dst)
  call void @enzpy.ckpt.aim(ptr %f, i64 %k)
  br label %run
run:
  call {sret} @{step}({ops})
  %k1 = add i64 %k, 1
  %flag = load i64, ptr {carry}
  %more = icmp eq i64 %flag, 1
  br i1 %more, label %loop, label %done
done:
  call void @enzpy.ckpt.set(ptr %f, i64 32, i64 %k1)
  ret void
}}

define internal void @{rev}({sig_rev}) {{
entry:
{views}  %S = call i64 @enzpy.ckpt.get(ptr %f, i64 40)
  %final = call ptr @malloc(i64 %S)
  call void @{n}.save({ops}, ptr %final)
  %n = call i64 @enzpy.ckpt.get(ptr %f, i64 32)
  %left = load i64, ptr {carry}
  %last = sub i64 %n, 1
  br label %outer
outer:
  %e = phi i64 [ %n, %entry ], [ %t, %{adjoint_end} ]{from_view}
  %any = icmp sgt i64 %e, 0
  br i1 %any, label %restore, label %done
restore:
  %t = sub i64 %e, 1
  %src = call ptr @enzpy.ckpt.latest(ptr %f, i64 %t)
  %p0 = call i64 @enzpy.ckpt.latest_step(ptr %f)
{in_place}  br label %load
load:
  call void @{n}.load({ops}, ptr %src)
  br label %advance
advance:
  %p = phi i64 [ %p0, %load ], [ %m, %placed ]
  %there = icmp sge i64 %p, %t
  br i1 %there, label %adjoint, label %plan
plan:
  %m = call i64 @enzpy.ckpt.next(ptr %f, i64 %p, i64 %t)
  %steps = sub i64 %m, %p
  call void @enzpy.ckpt.add(ptr %f, i64 64, i64 %steps)
  br label %run
run:
  %q = phi i64 [ %p, %plan ], [ %q1, %went ]
  call {sret} @{step}({ops})
  %on = load i64, ptr {carry}
  %goes = icmp eq i64 %on, 1
  br i1 %goes, label %went, label %fail
went:
  %q1 = add i64 %q, 1
  %again = icmp slt i64 %q1, %m
  br i1 %again, label %run, label %ran
ran:
  %mid = icmp slt i64 %m, %t
  br i1 %mid, label %push, label %placed
push:
  %dst = call ptr @enzpy.ckpt.push(ptr %f, i64 %m)
  call void @{n}.save({ops}, ptr %dst)
  br label %placed
placed:
  br label %advance
adjoint:
  store i64 -1, ptr {carry}
  {sg}call {sret} @{step_grad}({ops}{shadows}{douts})
{sg_check}  %got = load i64, ptr {carry}
  %final_step = icmp eq i64 %t, %last
  %want = select i1 %final_step, i64 %left, i64 1
  %same = icmp eq i64 %got, %want
  br i1 %same, label %outer, label %fail
{view_block}fail:
  call void @enzpy.ckpt.fail()
  call void @free(ptr %final)
  call void @enzpy.ckpt.release(ptr %f, ptr @"{n}.pool")
  ret void
done:
  call void @{n}.load({ops}, ptr %final)
  call void @free(ptr %final)
{stats}  call void @enzpy.ckpt.release(ptr %f, ptr @"{n}.pool")
  ret void
}}

define internal void @{free}(ptr %f) {{
entry:
  call void @enzpy.ckpt.release(ptr %f, ptr @"{n}.pool")
  ret void
}}

declare {sret} @{step}({types})
declare {sret} @{step_grad}({types}{shadow_types}{dout_types})
declare ptr @malloc(i64)
declare void @free(ptr)
"""

# the step at t runs on the snapshot of t in place (its last use): no copy back into the arrays
IN_PLACE = """  %here = icmp eq i64 %p0, %t
  br i1 %here, label %view, label %load
"""
VIEW = """view:
  call void @{n}.view({ops}, ptr %src, ptr %views)
{loads}  store i64 -1, ptr {vc}
  {sg}call {sret} @{step_grad}({view_ops}{shadows}{douts})
{sg_check}  %vgot = load i64, ptr {vc}
  %vlast = icmp eq i64 %t, %last
  %vwant = select i1 %vlast, i64 %left, i64 1
  %vsame = icmp eq i64 %vgot, %vwant
  br i1 %vsame, label %outer, label %fail
"""

STATS = """  %{k}.v = call i64 @enzpy.ckpt.get(ptr %f, i64 {field})
  %{k}.p = getelementptr i64, ptr @"{g}", i64 {j}
  store i64 %{k}.v, ptr %{k}.p
"""
# the frame's fields the reverse leaves in the stats global (version.py's STAT_FIELDS, in order)
FRAME_STATS = (("n", 32), ("c", 24), ("S", 40), ("recomputed", 64), ("peak", 72))


def emit_split(module, tl, act, aug: str, rev: str, step_grad: str) -> None:
    """Define `aug`, `rev` and their free function for time loop `tl` with activity `act`;
    `step_grad` is the step's gradient (driver.step_gradient: forward and reverse of one step)."""
    ensure_schedule(module)
    types = [p.type for p in module.functions[tl.name].params]
    add_state_functions(module, tl, types)
    dup = [k for k, a in enumerate(act) if a is Activity.DUP]
    active = [k for k, a in enumerate(act) if a is Activity.ACTIVE]
    ops = ", ".join(f"{t} %a{k}" for k, t in enumerate(types))
    shadows = "".join(f", ptr %s{k}" for k in dup)
    douts = "".join(f", ptr %d{k}" for k in active)
    module.items.append(f'@"{tl.name}.pool" = internal global ptr null, align 8')
    stats = "".join(STATS.format(k=k, field=fld, g=tl.stats, j=j)
                    for j, (k, fld) in enumerate(FRAME_STATS)) if tl.stats else ""
    view = _view(tl, types, step_grad, shadows, douts) if tl.in_place else ""
    sret = "i32" if tl.status else "void"
    text = AUG.format(sret=sret, sg="%sg = " if tl.status else "",
        sg_check=STATUS_CHECK.format(p="") if tl.status else "",
        in_place=IN_PLACE if view else "", view_block=view,
        from_view=(", [ %t, %vsg.ok ]" if tl.status else ", [ %t, %view ]") if view else "",
        adjoint_end="sg.ok" if tl.status else "adjoint",
        views=f"  %views = alloca [{len(tl.regions) + 1} x ptr], align 8\n" if view else "",
        aug=aug, rev=rev, free=free_name(aug), n=tl.name, step=tl.step, step_grad=step_grad,
        budget=tl.budget, ops=ops, shadows=shadows, douts=douts, stats=stats,
        carry=f"%a{len(types) - 1}", trips_at=tl.carry_bytes - 8,
        seg_at=tl.carry_bytes - 16, sig_aug=f"{ops}{shadows}, ptr %fo",
        sig_rev=f"{ops}{shadows}{douts}, ptr %f", types=", ".join(str(t) for t in types),
        shadow_types=", ptr" * len(dup), dout_types=", ptr" * len(active))
    for fn in parse_module(rewrite(module, text)).functions.values():
        if fn.name not in module.functions or fn.name in (aug, rev, free_name(aug)):
            fn.generated = True
            module.add_function(fn)


# a step with a parallel launch: its gradient returns the launch's error status when a body failed
STATUS_CHECK = """  %{p}sgok = icmp eq i32 %{p}sg, 0
  br i1 %{p}sgok, label %{p}sg.ok, label %fail
{p}sg.ok:
"""


def _view(tl, types, step_grad, shadows, douts) -> str:
    """The block that runs the step's gradient on a snapshot in place (state.py's N.view)."""
    ops = [f"{t} %a{k}" for k, t in enumerate(types)]
    loads = ""
    for j, k in enumerate([k for k, _ in tl.regions] + [len(types) - 1]):
        loads += (f"  %vp{j} = getelementptr ptr, ptr %views, i64 {j}\n"
                  f"  %v{j} = load ptr, ptr %vp{j}\n")
        ops[k] = f"ptr %v{j}"
    return VIEW.format(sret="i32" if tl.status else "void", sg="%vsg = " if tl.status else "",
                       sg_check=STATUS_CHECK.format(p="v") if tl.status else "",
                       vc=f"%v{len(tl.regions)}", n=tl.name,
                       ops=", ".join(f"{t} %a{k}" for k, t in enumerate(types)),
                       loads=loads, step_grad=step_grad, view_ops=", ".join(ops),
                       shadows=shadows, douts=douts)
