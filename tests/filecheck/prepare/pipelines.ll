; The prepare pipelines (transforms/prepare/pipeline.py) on one loop: reverse mode's hoists the
; invariant load of x[0] (hoist-loads) and folds `n < 0` (fold-sign-tests: n is the length of
; y's extent); forward mode's folds the sign test only, and only when extents are given.
; RUN: %opt -p prepare --mode reverse --noalias --extents 1=2.2:2:f64 %s | %filecheck %s
; RUN: %opt -p prepare --mode forward --noalias --extents 1=2.2:2:f64 %s | %filecheck %s --check-prefix=FORWARD
; RUN: %opt -p prepare --mode forward --noalias %s | %filecheck %s --check-prefix=PLAIN

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %a = load double, ptr %x, align 8
  %neg = icmp slt i64 %n, 0
  %k = select i1 %neg, i64 0, i64 %i
  %py = getelementptr double, ptr %y, i64 %k
  store double %a, ptr %py, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

; CHECK: entry:
; CHECK-NEXT: %a = load double, ptr %x, align 8
; CHECK: loop:
; CHECK: %k = select i1 false, i64 0, i64 %i

; FORWARD: loop:
; FORWARD: %a = load double, ptr %x, align 8
; FORWARD: %k = select i1 false, i64 0, i64 %i

; PLAIN: %k = select i1 %neg, i64 0, i64 %i
