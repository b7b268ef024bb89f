; Split entries with a kept parameter: y[i] = c[i] * x[i] * x[i]. The caller keeps c unchanged
; for the reverse sweeps (--kept 1): c[i] is loaded again in the reverse sweep, not taped; x is
; written by the function (x[i] = 0 after its use), so kept does not apply to it and x[i] stays
; on the tape.
; RUN: %opt -p reverse-mode --fn f --activity dup,const,dup,const --noalias --split --kept 0,1 %s | %filecheck %s

define void @f(ptr %x, ptr %c, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %pc = getelementptr double, ptr %c, i64 %i
  %k = load double, ptr %pc, align 8
  %m = fmul double %a, %a
  %r = fmul double %k, %m
  %py = getelementptr double, ptr %y, i64 %i
  store double %r, ptr %py, align 8
  store double 0.0, ptr %px, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

; CHECK-LABEL: define internal void @grad.sweep(
; CHECK-NOT: getelementptr double, ptr %x,
; CHECK: %[[PC:.*]] = getelementptr double, ptr %c, i64
; CHECK-NEXT: load double, ptr %[[PC]]
; CHECK-NOT: getelementptr double, ptr %x,
; CHECK-LABEL: define void @grad.rev(
