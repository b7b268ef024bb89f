; runtime/heap.ll: A heap other than libc's: null-safe free and realloc by allocate + copy + free.
; RUN: %opt -p runtime --helpers enzpy.buffer,enzpy.push_child --heap my_alloc,my_free %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.buffer,enzpy.push_child --heap my_alloc,my_free %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal void @enzpy.heap.free(ptr %p) {
; CHECK: call void @my_free(ptr %p)
; CHECK-LABEL: define internal ptr @enzpy.heap.realloc(ptr %old, i64 %oldbytes, i64 %bytes) {
; CHECK: %new = call ptr @my_alloc(i64 %bytes)
; CHECK: call void @llvm.memcpy.p0.p0.i64(ptr %new, ptr %old, i64 %n, i1 false)
; CHECK: call void @my_free(ptr %old)

; DECL-DAG: declare ptr @my_alloc(i64)
; DECL-DAG: declare void @my_free(ptr)
; DECL-DAG: declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
