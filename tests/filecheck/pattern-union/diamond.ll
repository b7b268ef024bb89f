; Both arms of a branch on x's value run, one after the other: the store in the first arm keeps
; the old value on the way not taken (select on %c) and unites the tangents (0 * each side);
; the join's phi takes select(c, m, s) + 0*m + 0*s from the second arm. The branch weights
; (!prof) go with the conditional branch.
; RUN: %opt -p pattern-union --activity dup,dup %s | %filecheck %s

define void @f(ptr %x, ptr %y) {
entry:
  %a = load double, ptr %x, align 8
  %c = fcmp ogt double %a, 0.0
  br i1 %c, label %then, label %else, !prof !0
then:
  %p1 = getelementptr double, ptr %x, i64 1
  %b = load double, ptr %p1, align 8
  %m = fmul double %b, %b
  store double %m, ptr %y, align 8
  br label %join
else:
  %p2 = getelementptr double, ptr %x, i64 2
  %d = load double, ptr %p2, align 8
  %s = call double @llvm.sin.f64(double %d)
  br label %join
join:
  %r = phi double [ %m, %then ], [ %s, %else ]
  %q = getelementptr double, ptr %y, i64 1
  store double %r, ptr %q, align 8
  ret void
}

declare double @llvm.sin.f64(double)

!0 = !{!"branch_weights", i32 1, i32 99}

; CHECK-LABEL: entry:
; CHECK: %c = fcmp ogt double %a, 0.0
; CHECK-NEXT: br label %then{{$}}
; CHECK-LABEL: then:
; CHECK: %[[OLD:.+]] = load double, ptr %y
; CHECK-NEXT: %[[KEEP:.+]] = select i1 %c, double %m, double %[[OLD]]
; CHECK-NEXT: %[[Z1:.+]] = fmul double 0x0000000000000000, %m
; CHECK-NEXT: %[[Z2:.+]] = fmul double 0x0000000000000000, %[[OLD]]
; CHECK-NEXT: %[[ZS:.+]] = fadd double %[[Z1]], %[[Z2]]
; CHECK-NEXT: %[[NEW:.+]] = fadd double %[[KEEP]], %[[ZS]]
; CHECK-NEXT: store double %[[NEW]], ptr %y
; CHECK-NEXT: br label %else
; CHECK-LABEL: else:
; CHECK: %s = call double @llvm.sin.f64(double %d)
; CHECK-NEXT: %[[PICK:.+]] = select i1 %c, double %m, double %s
; CHECK: %[[U:.+]] = fadd double %[[PICK]],
; CHECK-NEXT: br label %join
; CHECK-LABEL: join:
; CHECK-NEXT: %r = phi double [ %[[U]], %else ]
