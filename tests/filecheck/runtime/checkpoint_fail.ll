; runtime/checkpoint_fail.ll: a checkpointed loop's step that leaves another way when it runs
; again is reported through the host's error report (--error-report), the message a C string.
; RUN: %opt -p runtime --helpers enzpy.ckpt.frame --error-report my_report,-1,my_pending %s | %filecheck %s

; CHECK-LABEL: define internal void @enzpy.ckpt.fail() {
; CHECK-NEXT: entry:
; CHECK-NEXT: call void @my_report(ptr @enzpy.ckpt.message)
; CHECK-NEXT: ret void
; CHECK: @enzpy.ckpt.message = private unnamed_addr constant [163 x i8] c"\65\6E\7A\79\6D\65\5F\70\79\3A
; CHECK-SAME: \00"
; CHECK: declare void @my_report(ptr)
