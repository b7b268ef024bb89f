; A time loop that overwrites u (extent known: n elements of `size` bytes, stride `stride`)
; reversed from snapshots within a 4KB budget (transforms/reverse/loops/checkpoint/): the loop becomes
; @f.ckpt.0 calling one step @f.ckpt.0.step; the gradient's forward runs @f.ckpt.0.aug.0 (the
; schedule keeps snapshots), its reverse @f.ckpt.0.rev.0 (restore, run forward, reverse one
; step with the step's own gradient). Without the extent, or with the full tape, nothing is
; outlined. auto:4KB keeps the loop beside the call and chooses on entry (version.py).
; RUN: %opt -p reverse-mode --activity dup,const,const,const,const,active --memory 4KB --extents 0=1.2:3:f64 %s | %filecheck %s
; RUN: %opt -p reverse-mode --activity dup,const,const,const,const,active --memory 4KB %s | %filecheck %s --check-prefix=TAPE
; RUN: %opt -p reverse-mode --activity dup,const,const,const,const,active --extents 0=1.2:3:f64 %s | %filecheck %s --check-prefix=TAPE
; RUN: %opt -p reverse-mode --activity dup,const,const,const,const,active --memory auto:4KB --extents 0=1.2:3:f64 %s | %filecheck %s --check-prefix=AUTO

define void @f(ptr %u, i64 %n, i64 %stride, i64 %size, i64 %steps, double %c) {
entry:
  br label %time
time:
  %t = phi i64 [ 0, %entry ], [ %t1, %next ]
  br label %space
space:
  %i = phi i64 [ 0, %time ], [ %i1, %space ]
  %p = getelementptr double, ptr %u, i64 %i
  %a = load double, ptr %p, align 8
  %b = call double @llvm.sin.f64(double %a)
  %v = fmul double %b, %c
  store double %v, ptr %p, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %space, label %next
next:
  %t1 = add i64 %t, 1
  %go = icmp slt i64 %t1, %steps
  br i1 %go, label %time, label %exit
exit:
  ret void
}
declare double @llvm.sin.f64(double)

; CHECK-LABEL: define void @f(
; CHECK: call void @f.ckpt.0(ptr %u, i64 %n, i64 %stride, i64 %size, i64 %steps, double %c, ptr %f.ckpt.0.carry)
; CHECK-LABEL: define internal void @f.ckpt.0.step(
; CHECK: call double @llvm.sin.f64
; CHECK-LABEL: define void @grad(ptr %u, i64 %n, i64 %stride, i64 %size, i64 %steps, double %c, ptr %u.shadow, ptr %c.dout)
; CHECK: fwd.ckpt.0:
; CHECK: call void @f.ckpt.0.aug.0(
; CHECK: rev.ckpt.0:
; CHECK: call void @f.ckpt.0.rev.0(
; CHECK-LABEL: define internal void @f.ckpt.0.aug.0(
; CHECK: %f = call ptr @enzpy.ckpt.frame(i64 %S, i64 %room, ptr @f.ckpt.0.pool)
; CHECK: %w = call i1 @enzpy.ckpt.wants(ptr %f, i64 %k)
; CHECK: %dst = call ptr @enzpy.ckpt.push(ptr %f, i64 %k)
; CHECK-NEXT: call void @f.ckpt.0.save(
; CHECK: call void @f.ckpt.0.step(
; CHECK-LABEL: define internal void @f.ckpt.0.rev.0(
; CHECK: %src = call ptr @enzpy.ckpt.latest(ptr %f, i64 %t)
; CHECK: call void @f.ckpt.0.load(
; CHECK: %m = call i64 @enzpy.ckpt.next(ptr %f, i64 %p, i64 %t)
; CHECK: call void @f.ckpt.0.step.grad.dccccad(
; CHECK: call void @enzpy.ckpt.fail()
; CHECK: call void @enzpy.ckpt.release(ptr %f, ptr @f.ckpt.0.pool)
; CHECK-LABEL: define internal void @f.ckpt.0.step.grad.dccccad(
; CHECK-LABEL: define internal ptr @enzpy.ckpt.frame(

; TAPE-LABEL: define void @grad
; TAPE-NOT: ckpt
; TAPE: ret void

; AUTO-LABEL: define void @f(
; AUTO: ckpt.choose.0:
; AUTO: br i1 %tape.fits, label %time, label %ckpt.0
; AUTO-LABEL: define void @grad
; AUTO: fwd.ckpt.choose.0:
; AUTO: br i1 %tape.fits, label %edge.ckpt.choose.0.time, label %fwd.ckpt.0
; AUTO: call void @f.ckpt.0.aug.0(
