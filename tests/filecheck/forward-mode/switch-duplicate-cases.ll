; A switch with two cases to one block is two edges into it, so the phi there has two entries
; from the switch's block; the value, tangent and every other phi forward mode makes must keep
; both (LLVM's verifier rejects a phi with fewer entries than edges). Found in the hand
; tracking eval: Numba's shape check `n == 4 or n == 1` before a matrix product.
; RUN: %opt -p forward-mode --fn f --activity active,const %s | %filecheck %s

define double @f(double %x, i64 %n) {
entry:
  %sq = fmul double %x, %x
  switch i64 %n, label %other [ i64 4, label %join i64 1, label %join ]
other:
  %tw = fmul double %x, 2.0
  br label %join
join:
  %r = phi double [ %sq, %entry ], [ %sq, %entry ], [ %tw, %other ]
  ret double %r
}

; CHECK-LABEL: define { double, double } @fwd(
; CHECK: switch i64 %n, label %other [ i64 4, label %join i64 1, label %join ]
; CHECK: join:
; CHECK-NEXT: %r = phi double [ %sq, %entry ], [ %sq, %entry ], [ %tw, %other ]
; CHECK-NEXT: %r.t = phi double [ %{{[^,]+}}, %entry ], [ %{{[^,]+}}, %entry ], [ %{{[^,]+}}, %other ]
