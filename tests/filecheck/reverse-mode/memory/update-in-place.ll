; y[i] += x[i] * x[i]: the shadow of y[i] passes through the update. The reverse reads it once and
; writes nothing back (no zeroing by the store's adjoint, no re-adding by the load's).
; RUN: %opt -p reverse-mode --fn f --activity dup,dup,const --noalias %s | %filecheck %s

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %m = fmul double %a, %a
  %py = getelementptr double, ptr %y, i64 %i
  %old = load double, ptr %py, align 8
  %new = fadd double %old, %m
  store double %new, ptr %py, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

; CHECK-LABEL: define void @grad
; CHECK-LABEL: rev.loop:
; CHECK: [[SP:%.*]] = getelementptr double, ptr %y.shadow
; CHECK-NEXT: [[D:%.*]] = load double, ptr [[SP]]
; CHECK-NOT: ptr [[SP]]{{(,|$)}}
; CHECK: [[DX:%.*]] = getelementptr double, ptr %x.shadow
; CHECK-NOT: ptr [[SP]]{{(,|$)}}
; CHECK: br label %resume.loop
