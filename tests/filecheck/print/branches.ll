; Branch joins: where the two arms of one conditional branch meet, which way control came is the
; condition's last value (the reverse sweep asks it again instead of taping the predecessor).
; RUN: %opt -p print --what branches %s | %filecheck %s

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

; CHECK: %join: %c ? %then : %else
