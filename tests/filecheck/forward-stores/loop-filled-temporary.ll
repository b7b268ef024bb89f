; Loop A fills tmp[j] = x[j] - m[j]; loop B, with the same trip count, reads tmp[j]. The load
; becomes the stored expression at B's index, so the reverse sweep needs no tape for tmp when
; later code overwrites it. The store stays. (--noalias: x, m and y do not overlap, so nothing
; writes x or m.) @later_write writes tmp between A and B: its load
; stays, as does @other_count's, whose B runs a different number of iterations.
; RUN: %opt -p forward-stores --noalias --fn f %s | %filecheck %s
; RUN: %opt -p forward-stores --noalias --fn later_write %s | %filecheck %s --check-prefix=WRITE
; RUN: %opt -p forward-stores --noalias --fn other_count %s | %filecheck %s --check-prefix=COUNT

define void @f(ptr %x, ptr %m, ptr %y, i64 %n) {
entry:
  %tmp = alloca [16 x double], align 8
  br label %fill
fill:
  %i = phi i64 [ 0, %entry ], [ %i1, %fill ]
  %px = getelementptr double, ptr %x, i64 %i
  %xi = load double, ptr %px, align 8
  %pm = getelementptr double, ptr %m, i64 %i
  %mi = load double, ptr %pm, align 8
  %d = fsub double %xi, %mi
  %pt = getelementptr double, ptr %tmp, i64 %i
  store double %d, ptr %pt, align 8
  %i1 = add i64 %i, 1
  %c = icmp eq i64 %i1, %n
  br i1 %c, label %use, label %fill
use:
  %j = phi i64 [ 0, %fill ], [ %j1, %use ]
  %pr = getelementptr double, ptr %tmp, i64 %j
  %r = load double, ptr %pr, align 8
  %sq = fmul double %r, %r
  %py = getelementptr double, ptr %y, i64 %j
  store double %sq, ptr %py, align 8
  %j1 = add i64 %j, 1
  %c2 = icmp eq i64 %j1, %n
  br i1 %c2, label %exit, label %use
exit:
  ret void
}

; CHECK-LABEL: define void @f(
; CHECK: use:
; CHECK-NEXT: %j = phi i64
; CHECK-NEXT: %pr = getelementptr double, ptr %tmp, i64 %j
; CHECK-NEXT: [[PX:%.*]] = getelementptr double, ptr %x, i64 %j
; CHECK-NEXT: [[XI:%.*]] = load double, ptr [[PX]], align 8
; CHECK-NEXT: [[PM:%.*]] = getelementptr double, ptr %m, i64 %j
; CHECK-NEXT: [[MI:%.*]] = load double, ptr [[PM]], align 8
; CHECK-NEXT: [[D:%.*]] = fsub double [[XI]], [[MI]]
; CHECK-NEXT: %sq = fmul double [[D]], [[D]]
; CHECK-NOT: load double, ptr %pr
; CHECK-LABEL: define void @later_write(

define void @later_write(ptr %x, ptr %m, ptr %y, i64 %n) {
entry:
  %tmp = alloca [16 x double], align 8
  br label %fill
fill:
  %i = phi i64 [ 0, %entry ], [ %i1, %fill ]
  %px = getelementptr double, ptr %x, i64 %i
  %xi = load double, ptr %px, align 8
  %pt = getelementptr double, ptr %tmp, i64 %i
  store double %xi, ptr %pt, align 8
  %i1 = add i64 %i, 1
  %c = icmp eq i64 %i1, %n
  br i1 %c, label %between, label %fill
between:
  store double 0.0, ptr %tmp, align 8
  br label %use
use:
  %j = phi i64 [ 0, %between ], [ %j1, %use ]
  %pr = getelementptr double, ptr %tmp, i64 %j
  %r = load double, ptr %pr, align 8
  %py = getelementptr double, ptr %y, i64 %j
  store double %r, ptr %py, align 8
  %j1 = add i64 %j, 1
  %c2 = icmp eq i64 %j1, %n
  br i1 %c2, label %exit, label %use
exit:
  ret void
}

; WRITE-LABEL: define void @later_write(
; WRITE: %r = load double, ptr %pr, align 8

define void @other_count(ptr %x, ptr %m, ptr %y, i64 %n, i64 %k) {
entry:
  %tmp = alloca [16 x double], align 8
  br label %fill
fill:
  %i = phi i64 [ 0, %entry ], [ %i1, %fill ]
  %px = getelementptr double, ptr %x, i64 %i
  %xi = load double, ptr %px, align 8
  %pt = getelementptr double, ptr %tmp, i64 %i
  store double %xi, ptr %pt, align 8
  %i1 = add i64 %i, 1
  %c = icmp eq i64 %i1, %n
  br i1 %c, label %use, label %fill
use:
  %j = phi i64 [ 0, %fill ], [ %j1, %use ]
  %pr = getelementptr double, ptr %tmp, i64 %j
  %r = load double, ptr %pr, align 8
  %py = getelementptr double, ptr %y, i64 %j
  store double %r, ptr %py, align 8
  %j1 = add i64 %j, 1
  %c2 = icmp eq i64 %j1, %k
  br i1 %c2, label %exit, label %use
exit:
  ret void
}

; COUNT-LABEL: define void @other_count(
; COUNT: %r = load double, ptr %pr, align 8
