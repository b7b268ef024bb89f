; The split gradient of an outlined time loop (transforms/reverse/loops/checkpoint/emit.py), in pieces:
; `split` defines N.aug (AUG: runs the steps and keeps snapshots; its frame is the schedule), N.rev
; (REV: for each step from the last, from the latest snapshot, runs the plain step forward up to it
; and then its gradient STEP_GRAD) and their free function FREE. N is the time loop, STEP its step,
; OPS the step's operands, SHADOWS and DOUTS the gradient's extra ones, CARRY the carry operand
; (TRIPS_AT, SEG_AT: its trip count's and segment length's byte offsets), BUDGET the tape bytes
; allowed, SRET the step's result type (i32 with a parallel launch's status, else void).
; The other pieces are filled in by emit.py: the pool global, the step's gradient without and
; with a status (P: the prefix of its names, CALL_OPS its operands), the stats a reverse leaves
; (K, FIELD: a frame field and its offset; G the stats global, J the slot), and the blocks that
; run the step's gradient on the snapshot in place (in_place, view, views, view_load, from_view).

; -- split
define internal void @{{AUG}}({{SIG_AUG}}) {
entry:
  %S = call i64 @{{N}}.bytes({{OPS}})
  %kp = getelementptr i8, ptr {{CARRY}}, i64 {{SEG_AT}}
  %seg = load i64, ptr %kp
  %extra = sub i64 %seg, 1
  %segtape = mul i64 %extra, %S
  %over = icmp ugt i64 %segtape, {{BUDGET}}
  %rest = sub i64 {{BUDGET}}, %segtape
  %room = select i1 %over, i64 0, i64 %rest
  %f = call ptr @enzpy.ckpt.frame(i64 %S, i64 %room, ptr @"{{N}}.pool")
  store ptr %f, ptr %fo
  %tp = getelementptr i8, ptr {{CARRY}}, i64 {{TRIPS_AT}}
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
  call void @{{N}}.save({{OPS}}, ptr %dst)
  call void @enzpy.ckpt.aim(ptr %f, i64 %k)
  br label %run
run:
  call {{SRET}} @{{STEP}}({{OPS}})
  %k1 = add i64 %k, 1
  %flag = load i64, ptr {{CARRY}}
  %more = icmp eq i64 %flag, 1
  br i1 %more, label %loop, label %done
done:
  call void @enzpy.ckpt.set(ptr %f, i64 32, i64 %k1)
  ret void
}

define internal void @{{REV}}({{SIG_REV}}) {
entry:
{{VIEWS}}
  %S = call i64 @enzpy.ckpt.get(ptr %f, i64 40)
  %final = call ptr @malloc(i64 %S)
  call void @{{N}}.save({{OPS}}, ptr %final)
  %n = call i64 @enzpy.ckpt.get(ptr %f, i64 32)
  %left = load i64, ptr {{CARRY}}
  %last = sub i64 %n, 1
  br label %outer
outer:
  %e = phi i64 [ %n, %entry ], [ %t, %{{ADJOINT_END}} ]{{FROM_VIEW}}
  %any = icmp sgt i64 %e, 0
  br i1 %any, label %restore, label %done
restore:
  %t = sub i64 %e, 1
  %src = call ptr @enzpy.ckpt.latest(ptr %f, i64 %t)
  %p0 = call i64 @enzpy.ckpt.latest_step(ptr %f)
{{IN_PLACE}}
  br label %load
load:
  call void @{{N}}.load({{OPS}}, ptr %src)
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
  call {{SRET}} @{{STEP}}({{OPS}})
  %on = load i64, ptr {{CARRY}}
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
  call void @{{N}}.save({{OPS}}, ptr %dst)
  br label %placed
placed:
  br label %advance
adjoint:
  store i64 -1, ptr {{CARRY}}
{{STEP_GRADIENT}}
  %got = load i64, ptr {{CARRY}}
  %final_step = icmp eq i64 %t, %last
  %want = select i1 %final_step, i64 %left, i64 1
  %same = icmp eq i64 %got, %want
  br i1 %same, label %outer, label %fail
{{VIEW_BLOCK}}
fail:
  call void @enzpy.ckpt.fail()
  call void @free(ptr %final)
  call void @enzpy.ckpt.release(ptr %f, ptr @"{{N}}.pool")
  ret void
done:
  call void @{{N}}.load({{OPS}}, ptr %final)
  call void @free(ptr %final)
{{STATS}}
  call void @enzpy.ckpt.release(ptr %f, ptr @"{{N}}.pool")
  ret void
}

define internal void @{{FREE}}(ptr %f) {
entry:
  call void @enzpy.ckpt.release(ptr %f, ptr @"{{N}}.pool")
  ret void
}

declare {{SRET}} @{{STEP}}({{TYPES}})
declare {{SRET}} @{{STEP_GRAD}}({{TYPES}}{{SHADOW_TYPES}}{{DOUT_TYPES}})
declare ptr @malloc(i64)
declare void @free(ptr)

; -- pool
@"{{N}}.pool" = internal global ptr null, align 8

; -- step_gradient
  call void @{{STEP_GRAD}}({{CALL_OPS}}{{SHADOWS}}{{DOUTS}})

; -- step_gradient_status
; a step with a parallel launch: its gradient returns the launch's error status when a body failed
  %{{P}}sg = call i32 @{{STEP_GRAD}}({{CALL_OPS}}{{SHADOWS}}{{DOUTS}})
  %{{P}}sgok = icmp eq i32 %{{P}}sg, 0
  br i1 %{{P}}sgok, label %{{P}}sg.ok, label %fail
{{P}}sg.ok:

; -- stats
; a frame field into the stats global (version.py's STAT_FIELDS, in order)
  %{{K}}.v = call i64 @enzpy.ckpt.get(ptr %f, i64 {{FIELD}})
  %{{K}}.p = getelementptr i64, ptr @"{{G}}", i64 {{J}}
  store i64 %{{K}}.v, ptr %{{K}}.p

; -- in_place
; the step at t runs on the snapshot of t in place (its last use): no copy back into the arrays
  %here = icmp eq i64 %p0, %t
  br i1 %here, label %view, label %load

; -- view
view:
  call void @{{N}}.view({{OPS}}, ptr %src, ptr %views)
{{LOADS}}
  store i64 -1, ptr {{VC}}
{{VIEW_GRADIENT}}
  %vgot = load i64, ptr {{VC}}
  %vlast = icmp eq i64 %t, %last
  %vwant = select i1 %vlast, i64 %left, i64 1
  %vsame = icmp eq i64 %vgot, %vwant
  br i1 %vsame, label %outer, label %fail

; -- views
  %views = alloca [{{SLOTS}} x ptr], align 8

; -- view_load
  %vp{{J}} = getelementptr ptr, ptr %views, i64 {{J}}
  %v{{J}} = load ptr, ptr %vp{{J}}

; -- from_view
, [ %t, %{{VIEW_END}} ]
