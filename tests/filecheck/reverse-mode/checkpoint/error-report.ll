; A checkpointed time loop in a function with a status (--error-report: the host's error report,
; rules/convention.py): a step that leaves another way when it runs again in the reverse sweep
; calls enzpy.ckpt.fail, which reports to the host (runtime/checkpoint_fail.ll), and the gradient
; returns the report's status when the host has an error pending (schedule.checkpoint_status).
; RUN: %opt -p reverse-mode --activity dup,const,const,const,const,active --memory 4KB --extents 0=1.2:3:f64 --error-report my_report,-1,my_pending %s | %filecheck %s

define i32 @f(ptr %u, i64 %n, i64 %stride, i64 %size, i64 %steps, double %c) {
entry:
  br label %time
time:
  %t = phi i64 [ 0, %entry ], [ %t1, %next ]
  br label %space
space:
  %i = phi i64 [ 0, %time ], [ %i1, %space ]
  %p = getelementptr double, ptr %u, i64 %i
  %a = load double, ptr %p, align 8
  %b = call double @llvm.sin.f64(double %a)
  %v = fmul double %b, %c
  store double %v, ptr %p, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %space, label %next
next:
  %t1 = add i64 %t, 1
  %go = icmp slt i64 %t1, %steps
  br i1 %go, label %time, label %exit
exit:
  ret i32 0
}
declare double @llvm.sin.f64(double)

; CHECK-LABEL: define i32 @grad(
; CHECK: call void @f.ckpt.0.rev.0(
; CHECK: [[BAD:%.*]] = call i1 @my_pending()
; CHECK-NEXT: [[STATUS:%.*]] = select i1 [[BAD]], i32 -1, i32 %{{.*}}
; CHECK-NEXT: ret i32 [[STATUS]]
; CHECK-LABEL: define internal void @f.ckpt.0.rev.0(
; CHECK: fail:
; CHECK-NEXT: call void @enzpy.ckpt.fail()
; CHECK-LABEL: define internal void @enzpy.ckpt.fail()
; CHECK-NEXT: entry:
; CHECK-NEXT: call void @my_report(ptr @enzpy.ckpt.message)
