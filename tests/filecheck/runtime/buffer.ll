; runtime/buffer.ll: A scratch buffer grown without keeping its contents.
; RUN: %opt -p runtime --helpers enzpy.buffer %s | %filecheck %s

; CHECK-LABEL: define internal ptr @enzpy.buffer(ptr %slot, ptr %capp, i64 %size) {
; CHECK: call void @free(ptr %p)
; CHECK: %new = call ptr @malloc(i64 %size)
