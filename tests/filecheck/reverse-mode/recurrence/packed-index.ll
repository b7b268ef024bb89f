; A packed index k, grown by the loop counter each iteration (GMM's triangular index; transforms/
; reverse/tape/recurrence.py): not an induction variable, yet not taped per iteration. The forward
; sweep keeps its last value in one frame field; the reverse sweep starts from it and subtracts
; each iteration's step, rebuilt from the counter, on its way back.
; RUN: %opt -p reverse-mode --fn f --activity dup,dup,const --noalias %s | %filecheck %s

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %k = phi i64 [ 0, %entry ], [ %k1, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s1, %loop ]
  %xp = getelementptr double, ptr %x, i64 %k
  %a = load double, ptr %xp, align 8
  %sq = fmul double %a, %a
  %s1 = fadd double %s, %sq
  %k1 = add i64 %k, %i
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  store double %s1, ptr %y, align 8
  ret void
}

; CHECK-LABEL: define void @grad(
; CHECK-NOT: @malloc
; CHECK: fwd.loop:
; CHECK: %k = phi i64
; CHECK-NEXT: %s = phi double
; CHECK-NEXT: [[LAST:%t\.[0-9]+]] = getelementptr i8, ptr %frame, i64 24
; CHECK-NEXT: store i64 %k, ptr [[LAST]]
; CHECK: rev.loop:
; CHECK: [[K:%t\.[0-9]+]] = load i64, ptr %frame
; CHECK-NEXT: %xp.re = getelementptr double, ptr %x, i64 [[K]]
; CHECK: getelementptr double, ptr %x.shadow, i64 [[K]]
; CHECK: rev.recur.loop.loop:
; CHECK-NEXT: [[KNOW:%t\.[0-9]+]] = load i64, ptr %frame
; CHECK: [[KBACK:%t\.[0-9]+]] = sub i64 [[KNOW]], %t.{{[0-9]+}}
; CHECK-NEXT: store i64 [[KBACK]], ptr %frame
; CHECK-NEXT: br label %rev.loop
; CHECK: rev.starts.exit.loop:
; CHECK: [[FROM:%t\.[0-9]+]] = getelementptr i8, ptr %frame, i64 24
; CHECK-NEXT: [[KLAST:%t\.[0-9]+]] = load i64, ptr [[FROM]]
; CHECK-NEXT: store i64 [[KLAST]], ptr %frame
