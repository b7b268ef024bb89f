; Forward activity: the floats that carry tangents (varying), whether or not they reach an output;
; integers and comparisons carry none.
; RUN: %opt -p print --what forward-activity --activity dup,dup %s | %filecheck %s

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

; CHECK: %a: varying
; CHECK-NEXT: %c: const
; CHECK-NEXT: %t: varying
; CHECK-NEXT: %e: varying
; CHECK-NEXT: %r: varying
; CHECK-NEXT: %k: const
