; a[i] with Numba's wraparound of negative indices: i < 0 ? i + n : i. The counter starts at 0
; and steps by 1 without unsigned wrap until it equals n, a length (parameter 2, >= 0): the test
; folds to false and the index is the counter itself. The carried index k (init 0, +1 nsw)
; folds too. An index that can be negative (parameter 3) keeps its test. Without the fact on n,
; both still fold: they count (start 0, +1 steps; analysis/nonnegative.py).
; RUN: %opt -p fold-sign-tests --fn f --nonnegative 2 %s | %filecheck %s
; RUN: %opt -p fold-sign-tests --fn f %s | %filecheck %s --check-prefix=UNKNOWN

define void @f(ptr %a, ptr %b, i64 %n, i64 %m) {
entry:
  %go = icmp sgt i64 %n, 0
  br i1 %go, label %loop, label %done
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %k = phi i64 [ 0, %entry ], [ %k1, %loop ]
  %neg = icmp slt i64 %i, 0
  %wrap = select i1 %neg, i64 %n, i64 0
  %idx = add i64 %wrap, %i
  %p = getelementptr double, ptr %a, i64 %idx
  %v = load double, ptr %p, align 8
  %kneg = icmp slt i64 %k, 0
  %kw = select i1 %kneg, i64 %n, i64 0
  %kidx = add i64 %kw, %k
  %q = getelementptr double, ptr %b, i64 %kidx
  store double %v, ptr %q, align 8
  %mneg = icmp slt i64 %m, 0
  %k1 = add nsw i64 %k, 1
  %i1 = add nuw i64 %i, 1
  %end = icmp eq i64 %i1, %n
  br i1 %end, label %done, label %loop
done:
  ret void
}

; CHECK-LABEL: define void @f(
; CHECK: %wrap = select i1 false, i64 %n, i64 0
; CHECK: %kw = select i1 false, i64 %n, i64 0
; CHECK: %mneg = icmp slt i64 %m, 0
; UNKNOWN: %wrap = select i1 false, i64 %n, i64 0
; UNKNOWN: %kw = select i1 false, i64 %n, i64 0
