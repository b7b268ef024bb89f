; What a gradient leaves for `explain` (transforms/reverse/sweeps/report.py): on each successful exit the
; forward sweep stores each taped loop's iteration count in the global <out>.tape_counts (one
; field here: the loop's counter). Split entries keep no counts.
; RUN: %opt -p reverse-mode --activity dup,dup,const --noalias %s | %filecheck %s
; RUN: %opt -p reverse-mode --activity dup,dup,const --noalias --split %s | %filecheck %s --check-prefix=SPLIT

define void @f(ptr noalias %x, ptr noalias %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi double [ 1.0, %entry ], [ %acc1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %acc1 = fdiv double %acc, %a
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  store double %acc1, ptr %y, align 8
  ret void
}

; CHECK-LABEL: define void @grad(
; CHECK: fwd.exit:
; CHECK-NEXT: store double %acc1, ptr %y, align 8
; CHECK-NEXT: [[COUNT:%t\.[0-9]+]] = load i64, ptr %frame
; CHECK-NEXT: [[FIELD:%t\.[0-9]+]] = getelementptr i64, ptr @grad.tape_counts, i64 0
; CHECK-NEXT: store i64 [[COUNT]], ptr [[FIELD]]
; CHECK-NEXT: br label %rev.exit
; CHECK: @"grad.tape_counts" = global [1 x i64] zeroinitializer

; SPLIT-NOT: tape_counts
