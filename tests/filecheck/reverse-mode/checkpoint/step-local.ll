; A stack block made before a time loop and written by each step before it reads it (a host's
; argument block for a launch; transforms/reverse/loops/checkpoint/step_local.py) is the step's own, not
; state: the outlined step makes its own copy in its entry, it is not a parameter of the step,
; and the carry (what a snapshot keeps besides u's memory) is no larger than without it.
; RUN: %opt -p reverse-mode --activity dup,const,const,const,const,active --memory 4KB --extents 0=1.2:3:f64 %s | %filecheck %s

define void @f(ptr %u, i64 %n, i64 %stride, i64 %size, i64 %steps, double %c) {
entry:
  %blk = alloca double, align 8
  store double 0.0, ptr %blk, align 8
  br label %time
time:
  %t = phi i64 [ 0, %entry ], [ %t1, %next ]
  store double %c, ptr %blk, align 8
  br label %space
space:
  %i = phi i64 [ 0, %time ], [ %i1, %space ]
  %p = getelementptr double, ptr %u, i64 %i
  %a = load double, ptr %p, align 8
  %b = call double @llvm.sin.f64(double %a)
  %k = load double, ptr %blk, align 8
  %v = fmul double %b, %k
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
; CHECK-NEXT: entry:
; CHECK-NEXT: %f.ckpt.0.carry = alloca [32 x i8], align 8
; CHECK-NEXT: %blk = alloca double, align 8
; CHECK: call void @f.ckpt.0(ptr %u, i64 %n, i64 %stride, i64 %size, i64 %steps, double %c, ptr %f.ckpt.0.carry)
; CHECK-LABEL: define internal void @f.ckpt.0.step(ptr %u, i64 %n, i64 %stride, i64 %size, i64 %steps, double %c, ptr %carry) {
; CHECK-NEXT: entry:
; CHECK-NEXT: %blk = alloca double, align 8
; CHECK: time:
; CHECK-NEXT: store double %c, ptr %blk, align 8
; CHECK-NEXT: %k = load double, ptr %blk, align 8
; CHECK-LABEL: define internal void @f.ckpt.0.step.grad.{{[a-z]+}}(
; CHECK: %blk = alloca double, align 8
