; A called function's loop with a trip bound known on entry (h) reserves exactly that many tape
; entries when its arrays grow, with no slack: a recursive kernel (GradBench's det) makes
; millions of such frames, each with a few-iteration loop. A loop without a bound (w) grows
; one iteration at a time and starts with room for 16 more.
; RUN: %opt -p reverse-mode --fn f --activity dup,const --noalias %s | %filecheck %s

define void @f(ptr %x, i64 %n) {
entry:
  call void @h(ptr %x, i64 %n)
  call void @w(ptr %x)
  ret void
}

define internal void @h(ptr %x, i64 %n) noinline {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %m = fmul double %a, %a
  store double %m, ptr %px, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

define internal void @w(ptr %x) noinline {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %m = fmul double %a, %a
  store double %m, ptr %px, align 8
  %i1 = add i64 %i, 1
  %v = load double, ptr %x, align 8
  %more = fcmp olt double %v, 1.0e3
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

; CHECK-LABEL: define internal void @h.aug.
; CHECK: grow.0:
; CHECK-NEXT: %[[DOUBLED:t\.[0-9]+]] = mul i64 %{{t\.[0-9]+}}, 2
; CHECK-NEXT: %[[BIGGER:t\.[0-9]+]] = icmp sgt i64 %[[DOUBLED]], %[[NEED:t\.[0-9]+]]
; CHECK-NEXT: select i1 %[[BIGGER]], i64 %[[DOUBLED]], i64 %[[NEED]]
; CHECK: grown.0:

; CHECK-LABEL: define internal void @w.aug.
; CHECK: grow.0:
; CHECK-NEXT: mul i64 %{{t\.[0-9]+}}, 2
; CHECK-NEXT: add i64 %{{t\.[0-9]+}}, 16
