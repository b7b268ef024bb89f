; Deferred shadow accumulation (transforms/reverse/shadows/deferred.py): x[0] is loaded on some
; iterations of a loop that writes no shadowed memory, so its adjoints go into a register slot
; (%acc.x) on each reverse iteration and into x's shadow once, when the reverse sweep leaves the
; loop (the load is conditional, so hoisting cannot do this).
; RUN: %opt -p reverse-mode --activity dup,dup,dup,const --noalias %s | %filecheck %s

define void @f(ptr noalias %x, ptr noalias %y, ptr noalias %z, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %latch ]
  %s = phi double [ 0.0, %entry ], [ %s1, %latch ]
  %py = getelementptr double, ptr %y, i64 %i
  %b = load double, ptr %py, align 8
  %pos = fcmp ogt double %b, 0.0
  br i1 %pos, label %then, label %latch
then:
  %a = load double, ptr %x, align 8
  %m = fmul double %a, %b
  %t = fadd double %s, %m
  br label %latch
latch:
  %s1 = phi double [ %t, %then ], [ %s, %loop ]
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  store double %s1, ptr %z, align 8
  ret void
}

; CHECK-LABEL: define void @grad(
; CHECK: %acc.x = alloca double, align 8
; CHECK: rev.then:
; CHECK-NOT: ptr %x.shadow
; CHECK: [[OLD:%.*]] = load double, ptr %acc.x
; CHECK-NEXT: [[NEW:%.*]] = fadd reassoc nsz double [[OLD]], %{{.*}}
; CHECK-NEXT: store double [[NEW]], ptr %acc.x
; CHECK: rev.leave.loop.entry:
; CHECK-NEXT: [[SUM:%.*]] = load double, ptr %acc.x
; CHECK-NEXT: store double 0x0000000000000000, ptr %acc.x
; CHECK-NEXT: [[S:%.*]] = load double, ptr %x.shadow, align 8
; CHECK-NEXT: [[T:%.*]] = fadd reassoc nsz double [[S]], [[SUM]]
; CHECK-NEXT: store double [[T]], ptr %x.shadow, align 8
