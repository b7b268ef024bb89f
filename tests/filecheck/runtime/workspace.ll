; runtime/workspace.ll: The workspace parked between calls: take, park, release.
; RUN: %opt -p runtime --helpers enzpy.take %s | %filecheck %s

; CHECK-LABEL: define internal ptr @enzpy.take(ptr %slot, ptr %dst, i64 %n) {
; CHECK: %ws = atomicrmw xchg ptr %slot, ptr null acq_rel, align 8
; CHECK: call void @llvm.memset.p0.i64(ptr %dst, i8 0, i64 %bytes, i1 false)
; CHECK: call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %ws, i64 %bytes, i1 false)
; CHECK-LABEL: define internal void @enzpy.park(ptr %slot, ptr %ws, ptr %src, i64 %n, i64 %pointers) {
; CHECK: %new = call ptr @malloc(i64 %bytes)
; CHECK: call void @llvm.memcpy.p0.p0.i64(ptr %w, ptr %src, i64 %bytes, i1 false)
; CHECK: %old = atomicrmw xchg ptr %slot, ptr %w acq_rel, align 8
; CHECK: call void @enzpy.free_workspace(ptr %old, i64 %n, i64 %pointers)
; CHECK-LABEL: define internal void @enzpy.release(ptr %slot, i64 %n, i64 %pointers) {
; CHECK: %old = atomicrmw xchg ptr %slot, ptr null acq_rel, align 8
; CHECK: call void @enzpy.free_workspace(ptr %old, i64 %n, i64 %pointers)
; CHECK-LABEL: define internal void @enzpy.free_workspace(ptr %old, i64 %n, i64 %pointers) {
; CHECK: call void @free(ptr %v)
; CHECK: call void @free(ptr %old)
