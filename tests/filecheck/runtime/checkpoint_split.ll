; runtime/checkpoint_split.ll: the pieces of a time loop's split gradient (transforms/reverse/loops/checkpoint/emit.py).
; RUN: %runtime checkpoint_split:split N=loop STEP=loop.step STEP_GRAD=loop.grad AUG=loop.aug REV=loop.rev FREE=loop.free 'OPS=ptr %a0, ptr %a1' 'SHADOWS=, ptr %x0' DOUTS= SRET=void 'STEP_GRADIENT=  call void @loop.grad()' IN_PLACE= VIEW_BLOCK= FROM_VIEW= ADJOINT_END=adjoint VIEWS= STATS= BUDGET=4096 CARRY=%a1 TRIPS_AT=40 SEG_AT=32 'SIG_AUG=ptr %a0, ptr %a1, ptr %x0, ptr %fo' 'SIG_REV=ptr %a0, ptr %a1, ptr %x0, ptr %f' 'TYPES=ptr, ptr' 'SHADOW_TYPES=, ptr' DOUT_TYPES= | %filecheck %s --check-prefix=CHECK
; RUN: %runtime checkpoint_split:step_gradient_status P=v STEP_GRAD=loop.grad 'CALL_OPS=ptr %v0, ptr %v1' 'SHADOWS=, ptr %x0' DOUTS= | %filecheck %s --check-prefix=STATUS
; RUN: %runtime checkpoint_split:view N=loop 'OPS=ptr %a0, ptr %a1' LOADS= VC=%v1 'VIEW_GRADIENT=  call void @loop.grad()' | %filecheck %s --check-prefix=VIEW
; RUN: %runtime checkpoint_split:stats K=peak FIELD=72 G=loop.stats J=4 | %filecheck %s --check-prefix=STATS

; CHECK-LABEL: define internal void @loop.aug(ptr %a0, ptr %a1, ptr %x0, ptr %fo) {
; CHECK: entry:
; CHECK: %S = call i64 @loop.bytes(ptr %a0, ptr %a1)
; CHECK: %f = call ptr @enzpy.ckpt.frame(i64 %S, i64 %room, ptr @"loop.pool")
; CHECK: store ptr %f, ptr %fo
; CHECK: call void @enzpy.ckpt.trips(ptr %f, i64 %segs)
; CHECK: loop:
; CHECK: %k = phi i64 [ 0, %entry ], [ %k1, %run ]
; CHECK: %w = call i1 @enzpy.ckpt.wants(ptr %f, i64 %k)
; CHECK: save:
; CHECK: %dst = call ptr @enzpy.ckpt.push(ptr %f, i64 %k)
; CHECK: call void @loop.save(ptr %a0, ptr %a1, ptr %dst)
; CHECK: call void @enzpy.ckpt.aim(ptr %f, i64 %k)
; CHECK: run:
; CHECK: call void @loop.step(ptr %a0, ptr %a1)
; CHECK: done:
; CHECK: call void @enzpy.ckpt.set(ptr %f, i64 32, i64 %k1)
; CHECK-LABEL: define internal void @loop.rev(ptr %a0, ptr %a1, ptr %x0, ptr %f) {
; CHECK: entry:
; CHECK: %S = call i64 @enzpy.ckpt.get(ptr %f, i64 40)
; CHECK: %final = call ptr @malloc(i64 %S)
; CHECK: call void @loop.save(ptr %a0, ptr %a1, ptr %final)
; CHECK: %n = call i64 @enzpy.ckpt.get(ptr %f, i64 32)
; CHECK: outer:
; CHECK: %e = phi i64 [ %n, %entry ], [ %t, %adjoint ]
; CHECK: br i1 %any, label %restore, label %done
; CHECK: restore:
; CHECK: %src = call ptr @enzpy.ckpt.latest(ptr %f, i64 %t)
; CHECK: %p0 = call i64 @enzpy.ckpt.latest_step(ptr %f)
; CHECK: load:
; CHECK: call void @loop.load(ptr %a0, ptr %a1, ptr %src)
; CHECK: advance:
; CHECK: %p = phi i64 [ %p0, %load ], [ %m, %placed ]
; CHECK: plan:
; CHECK: %m = call i64 @enzpy.ckpt.next(ptr %f, i64 %p, i64 %t)
; CHECK: call void @enzpy.ckpt.add(ptr %f, i64 64, i64 %steps)
; CHECK: run:
; CHECK: %q = phi i64 [ %p, %plan ], [ %q1, %went ]
; CHECK: call void @loop.step(ptr %a0, ptr %a1)
; CHECK: went:
; CHECK: ran:
; CHECK: push:
; CHECK: %dst = call ptr @enzpy.ckpt.push(ptr %f, i64 %m)
; CHECK: call void @loop.save(ptr %a0, ptr %a1, ptr %dst)
; CHECK: placed:
; CHECK: adjoint:
; CHECK: store i64 -1, ptr %a1
; CHECK: call void @loop.grad()
; CHECK: fail:
; CHECK: call void @enzpy.ckpt.fail()
; CHECK: call void @free(ptr %final)
; CHECK: call void @enzpy.ckpt.release(ptr %f, ptr @"loop.pool")
; CHECK: done:
; CHECK: call void @loop.load(ptr %a0, ptr %a1, ptr %final)
; CHECK: call void @free(ptr %final)
; CHECK: call void @enzpy.ckpt.release(ptr %f, ptr @"loop.pool")
; CHECK-LABEL: define internal void @loop.free(ptr %f) {
; CHECK: entry:
; CHECK: call void @enzpy.ckpt.release(ptr %f, ptr @"loop.pool")
; CHECK: declare void @loop.step(ptr, ptr)
; CHECK: declare void @loop.grad(ptr, ptr, ptr)
; CHECK: declare ptr @malloc(i64)
; CHECK: declare void @free(ptr)
; STATUS: %vsg = call i32 @loop.grad(ptr %v0, ptr %v1, ptr %x0)
; STATUS: %vsgok = icmp eq i32 %vsg, 0
; STATUS: br i1 %vsgok, label %vsg.ok, label %fail
; STATUS: vsg.ok:
; VIEW: view:
; VIEW: call void @loop.view(ptr %a0, ptr %a1, ptr %src, ptr %views)
; VIEW: store i64 -1, ptr %v1
; VIEW: call void @loop.grad()
; VIEW: %vgot = load i64, ptr %v1
; VIEW: %vlast = icmp eq i64 %t, %last
; VIEW: %vwant = select i1 %vlast, i64 %left, i64 1
; VIEW: %vsame = icmp eq i64 %vgot, %vwant
; VIEW: br i1 %vsame, label %outer, label %fail
; STATS: %peak.v = call i64 @enzpy.ckpt.get(ptr %f, i64 72)
; STATS: %peak.p = getelementptr i64, ptr @"loop.stats", i64 4
; STATS: store i64 %peak.v, ptr %peak.p
