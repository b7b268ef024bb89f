; Trip counts: an upper bound on a loop's iterations known when it is entered (it sizes the
; tape), and the exact count when the latch tests an i64 counter that steps by one (then the
; reverse sweep needs no start of the loop on the tape). The inner loop steps by 2: a bound, no
; exact count.
; RUN: %opt -p print --what tripcounts %s | %filecheck %s

define void @f(ptr %x, i64 %n, i64 %m) {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i1, %outer.latch ]
  br label %inner
inner:
  %j = phi i64 [ %i, %outer ], [ %j1, %inner ]
  %p = getelementptr double, ptr %x, i64 %j
  %v = load double, ptr %p, align 8
  %w = fmul double %v, %v
  store double %w, ptr %p, align 8
  %j1 = add i64 %j, 2
  %more = icmp slt i64 %j1, %m
  br i1 %more, label %inner, label %outer.latch
outer.latch:
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %outer
exit:
  ret void
}

; CHECK: loop 0 header outer: bound |%n - 0| / 1 + 2 if eq (increment) fires; exact from 0 to %n step 1 (ne on the increment %i)
; CHECK-NEXT: loop 1 header inner: bound |%m - %i| / 2 + 2 if sge (increment) fires; exact unknown
