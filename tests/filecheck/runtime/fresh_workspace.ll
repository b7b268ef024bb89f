; runtime/fresh_workspace.ll: --fresh: the workspace helpers for tapes that live for one call, freeing with the heap's free.
; RUN: %opt -p runtime --helpers enzpy.take --fresh --heap my_alloc,my_free,my_realloc %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.take --fresh --heap my_alloc,my_free,my_realloc %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal ptr @enzpy.take(ptr %slot, ptr %dst, i64 %n) {
; CHECK: call void @llvm.memset.p0.i64(ptr %dst, i8 0, i64 %bytes, i1 false)
; CHECK-LABEL: define internal void @enzpy.park(ptr %slot, ptr %ws, ptr %src, i64 %n, i64 %pointers) {
; CHECK: call void @my_free(ptr %v)

; DECL-DAG: declare ptr @my_alloc(i64)
; DECL-DAG: declare void @my_free(ptr)
; DECL-DAG: declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
; DECL-DAG: declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
; DECL-DAG: declare ptr @my_realloc(ptr, i64)
