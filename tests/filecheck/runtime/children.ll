; runtime/children.ll: The children list: frames of callees freed through their own free functions.
; RUN: %opt -p runtime --helpers enzpy.push_child %s | %filecheck %s

; CHECK-LABEL: define internal void @enzpy.push_child(ptr %list, ptr %fn, ptr %frame) {
; CHECK: %slot = call ptr @enzpy.list.append(ptr %list, i64 16, i64 2)
; CHECK-LABEL: define internal void @enzpy.free_children(ptr %list) {
; CHECK: call void %fn(ptr %frame)
; CHECK: call void @free(ptr %data)
; CHECK-LABEL: define internal void @enzpy.drop_children(ptr %list) {
; CHECK: call void @free(ptr %data)
