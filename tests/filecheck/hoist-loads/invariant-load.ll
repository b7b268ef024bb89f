; t[0] = x[i] in the outer loop, then u[j] = t[0] * t[0] in the inner loop. `t` and `u` are two
; mallocs, so the inner loop's stores cannot change t[0]: its load moves to the inner loop's
; preheader. The gradient then tapes it once per outer iteration, not once per inner one.
; RUN: %opt -p hoist-loads --fn f %s | %filecheck %s
; RUN: %opt -p reverse-mode --fn f --activity dup,dup,const %s | %filecheck %s --check-prefix=GRAD

declare ptr @malloc(i64)

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  %t = call ptr @malloc(i64 8)
  %u = call ptr @malloc(i64 800)
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i1, %outer.latch ]
  %px = getelementptr double, ptr %x, i64 %i
  %xi = load double, ptr %px, align 8
  store double %xi, ptr %t, align 8
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j1, %inner ]
  %s = phi double [ 0.0, %outer ], [ %s1, %inner ]
  %v = load double, ptr %t, align 8
  %sq = fmul double %v, %v
  %pu = getelementptr double, ptr %u, i64 %j
  store double %sq, ptr %pu, align 8
  %s1 = fadd double %s, %sq
  %j1 = add i64 %j, 1
  %jm = icmp slt i64 %j1, 100
  br i1 %jm, label %inner, label %outer.latch
outer.latch:
  %py = getelementptr double, ptr %y, i64 %i
  store double %s1, ptr %py, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %outer, label %exit
exit:
  ret void
}

; CHECK-LABEL: define void @f
; CHECK: outer:
; CHECK: store double %xi, ptr %t
; CHECK-NEXT: %v = load double, ptr %t
; CHECK-NEXT: br label %inner
; CHECK: inner:
; CHECK-NOT: load
; CHECK: outer.latch:

; The gradient tapes %v once per outer iteration, before the inner loop.
; GRAD-LABEL: define void @grad
; GRAD: fwd.outer:
; GRAD: %v = load double, ptr %t
; GRAD: store double %v, ptr
; GRAD: fwd.inner:
; GRAD-NOT: store double %v
; GRAD: rev.entry:
