; The nearest of k rows of x to 0: best = min(best, s), s = sum_j x[c, j]^2 (transforms/reverse/
; gated.py). Only the select's chosen arm gets an adjoint, so the reverse of the distance loop
; runs only where the select took s: the reverse of its exit edge tests the select's condition
; (taped) and otherwise skips to the reverse of its entry edge, the counter at its start.
; @g writes y in the inner loop: its reverse may not be skipped.
; RUN: %opt -p reverse-mode --fn f --activity dup,dup,const,const --noalias %s | %filecheck %s
; RUN: %opt -p reverse-mode --fn g --activity dup,dup,const,const --noalias %s | %filecheck %s --check-prefix=STORES

define void @f(ptr %x, ptr %y, i64 %k, i64 %d) {
entry:
  br label %row
row:
  %c = phi i64 [ 0, %entry ], [ %c1, %pick ]
  %best = phi double [ 0x7FF0000000000000, %entry ], [ %best1, %pick ]
  %base = mul i64 %c, %d
  br label %col
col:
  %j = phi i64 [ 0, %row ], [ %j1, %col ]
  %s = phi double [ 0.0, %row ], [ %s1, %col ]
  %at = add i64 %base, %j
  %px = getelementptr double, ptr %x, i64 %at
  %a = load double, ptr %px, align 8
  %sq = fmul double %a, %a
  %s1 = fadd double %s, %sq
  %j1 = add i64 %j, 1
  %more = icmp slt i64 %j1, %d
  br i1 %more, label %col, label %pick
pick:
  %dist = phi double [ %s1, %col ]
  %lt = fcmp olt double %dist, %best
  %best1 = select i1 %lt, double %dist, double %best
  %c1 = add i64 %c, 1
  %again = icmp slt i64 %c1, %k
  br i1 %again, label %row, label %exit
exit:
  store double %best1, ptr %y, align 8
  ret void
}

define void @g(ptr %x, ptr %y, i64 %k, i64 %d) {
entry:
  br label %row
row:
  %c = phi i64 [ 0, %entry ], [ %c1, %pick ]
  %best = phi double [ 0x7FF0000000000000, %entry ], [ %best1, %pick ]
  %base = mul i64 %c, %d
  br label %col
col:
  %j = phi i64 [ 0, %row ], [ %j1, %col ]
  %s = phi double [ 0.0, %row ], [ %s1, %col ]
  %at = add i64 %base, %j
  %px = getelementptr double, ptr %x, i64 %at
  %a = load double, ptr %px, align 8
  %sq = fmul double %a, %a
  %s1 = fadd double %s, %sq
  store double %s1, ptr %y, align 8
  %j1 = add i64 %j, 1
  %more = icmp slt i64 %j1, %d
  br i1 %more, label %col, label %pick
pick:
  %dist = phi double [ %s1, %col ]
  %lt = fcmp olt double %dist, %best
  %best1 = select i1 %lt, double %dist, double %best
  %c1 = add i64 %c, 1
  %again = icmp slt i64 %c1, %k
  br i1 %again, label %row, label %exit
exit:
  store double %best1, ptr %y, align 8
  ret void
}

; CHECK-LABEL: define void @grad
; CHECK:       rev.edge.pick.col:
; CHECK:         %[[LT:.+]] = load i1, ptr
; CHECK:         br i1 %[[LT]], label %rev.col, label %rev.skip.col
; CHECK:       rev.skip.col:
; CHECK:         br label %rev.edge.col.row

; STORES-LABEL: define void @grad
; STORES-NOT:  rev.skip
; STORES:      ret void
