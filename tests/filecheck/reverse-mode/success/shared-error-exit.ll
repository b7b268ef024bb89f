; Every error return of the forward sweep jumps to one `error` block, which releases the tape
; once (parks its arrays in the workspace) and returns the status through a phi: a teardown per
; exit made a Kalman filter's gradient half teardown code. Only the returns that may succeed
; record the tape counts.
; RUN: %opt -p reverse-mode --activity dup,dup,const --noalias --success-codes 0 %s | %filecheck %s

define i32 @f(ptr noalias %x, ptr noalias %y, i64 %n) {
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
  br i1 %more, label %loop, label %check
check:
  %neg = fcmp olt double %acc1, 0.0
  br i1 %neg, label %fail1, label %check2
check2:
  %big = fcmp ogt double %acc1, 1.0e6
  br i1 %big, label %fail2, label %exit
exit:
  store double %acc1, ptr %y, align 8
  ret i32 0
fail1:
  ret i32 1
fail2:
  ret i32 2
}

; CHECK-LABEL: define i32 @grad(
; CHECK: fwd.exit:
; CHECK: @grad.tape_counts, i64 0
; CHECK: br label %rev.exit
; CHECK: fwd.fail2:
; CHECK-NEXT: store i32 2, ptr %frame
; CHECK-NEXT: br label %error
; CHECK: fwd.fail1:
; CHECK-NEXT: store i32 1, ptr %frame
; CHECK-NEXT: br label %error
; CHECK: error:
; CHECK-NEXT: %status = phi i32 [ 2, %fwd.fail2 ], [ 1, %fwd.fail1 ]
; CHECK-NOT: ret
; CHECK: call void @enzpy.park(ptr @grad.workspace,
; CHECK-NEXT: ret i32 %status
; CHECK-NOT: error.
; CHECK-LABEL: define void @grad.release()
