; runtime/object_list.ll: Objects released through the host's function, null skipped.
; RUN: %opt -p runtime --helpers enzpy.release_objects.my_release %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.release_objects.my_release %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal void @enzpy.release_objects.my_release(ptr %list) {
; CHECK: call void @my_release(ptr %p)
; CHECK: call void @free(ptr %data)
; CHECK: store ptr null, ptr %list

; DECL-DAG: declare void @my_release(ptr)
; DECL-DAG: declare void @free(ptr)
