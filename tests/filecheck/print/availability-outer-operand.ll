; A cheap value of an inner loop whose operand is defined in the outer loop: %s, carried by the
; outer loop, is on the tape once per outer iteration, and %c = %s * x[j] is recomputed from it
; in the reverse of the inner loop instead of being taped on every inner iteration.
; RUN: %opt -p print --what availability --activity dup,dup --noalias %s | %filecheck %s

declare double @llvm.sin.f64(double)

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i1, %latch ]
  %s = phi double [ 1.0, %entry ], [ %acc1, %latch ]
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j1, %inner ]
  %acc = phi double [ %s, %outer ], [ %acc1, %inner ]
  %px = getelementptr double, ptr %x, i64 %j
  %a = load double, ptr %px, align 8
  %c = fmul double %s, %a
  %e = call double @llvm.sin.f64(double %c)
  %acc1 = fadd double %acc, %e
  %j1 = add i64 %j, 1
  %more = icmp slt i64 %j1, %n
  br i1 %more, label %inner, label %latch
latch:
  %i1 = add i64 %i, 1
  %again = icmp slt i64 %i1, %n
  br i1 %again, label %outer, label %exit
exit:
  store double %acc1, ptr %y, align 8
  ret void
}

; CHECK: %s: cache
; CHECK: %c: recompute
; CHECK-NOT: tape %c
; CHECK: tape %s (loop 0): it is carried from one loop iteration to the next
; CHECK-NOT: tape %c
