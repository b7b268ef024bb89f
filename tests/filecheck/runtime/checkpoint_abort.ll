; runtime/checkpoint_abort.ll: without a host's error report the message goes to stderr (from
; 8-byte words stored on the stack), then abort.
; RUN: %opt -p runtime --helpers enzpy.ckpt.frame %s | %filecheck %s

; CHECK-LABEL: define internal void @enzpy.ckpt.fail() {
; CHECK-NEXT: entry:
; CHECK-NEXT: %m = alloca [21 x i64], align 8
; CHECK-NEXT: store [21 x i64] [i64 8097302175899348581, i64 7310594678034807417,
; CHECK-NEXT: %w = call i64 @write(i32 2, ptr %m, i64 163)
; CHECK-NEXT: call void @abort()
; CHECK-NEXT: unreachable
; CHECK-DAG: declare i64 @write(i32, ptr, i64)
; CHECK-DAG: declare void @abort()
