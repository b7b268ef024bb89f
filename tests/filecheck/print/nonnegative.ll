; Non-negative integers: with parameter 2 (%n) known >= 0, n + 1 (nsw) is too; a zext always is.
; Without the fact, n + 1 may be negative.
; RUN: %opt -p print --what nonnegative --nonnegative 2 %s | %filecheck %s
; RUN: %opt -p print --what nonnegative %s | %filecheck %s --check-prefix=UNKNOWN

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  %a = load double, ptr %x, align 8
  %c = fcmp ogt double %a, 0.0
  br i1 %c, label %then, label %else
then:
  %t = fmul double %a, %a
  br label %join
else:
  %e = fsub double 0.0, %a
  br label %join
join:
  %r = phi double [ %t, %then ], [ %e, %else ]
  %k = icmp slt i64 %n, 0
  %m = add nsw i64 %n, 1
  %p = icmp slt i64 %m, 0
  %z = zext i1 %p to i64
  store double %r, ptr %y, align 8
  ret void
}

; CHECK: %k: maybe negative
; CHECK-NEXT: %m: nonnegative
; CHECK-NEXT: %p: maybe negative
; CHECK-NEXT: %z: nonnegative

; UNKNOWN: %m: maybe negative
; UNKNOWN: %z: nonnegative
