; A loop with two exits that bound it, `i == stop` (which never fires when stop is below 0:
; an exit's bound counts only when its test holds, decided on entry) and the latch's, and a
; third exit that does not bound it (a data test): its tape also grows on the way.
; RUN: %opt -p print --what tripcounts %s | %filecheck %s

define void @g(ptr %x, i64 %n, i64 %stop) {
entry:
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %i1, %latch ]
  %hit = icmp eq i64 %i, %stop
  br i1 %hit, label %exit, label %body
body:
  %p = getelementptr double, ptr %x, i64 %i
  %v = load double, ptr %p, align 8
  %neg = fcmp olt double %v, 0.0
  br i1 %neg, label %exit, label %latch
latch:
  %w = fmul double %v, %v
  store double %w, ptr %p, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %head, label %exit
exit:
  ret void
}

; CHECK: loop 0 header head: bound |%stop - 0| / 1 + 2 if eq fires or |%n - 0| / 1 + 2 if sge (increment) fires, or leaves elsewhere; exact unknown
