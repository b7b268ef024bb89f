; runtime/launch_pool.ll: The launch records of parallel loops, kept between calls.
; RUN: %opt -p runtime --helpers enzpy.pool.record %s | %filecheck %s

; CHECK-LABEL: define internal ptr @enzpy.pool.take(ptr %slot) {
; CHECK: %p = atomicrmw xchg ptr %slot, ptr null acq_rel
; CHECK-LABEL: define internal void @enzpy.pool.each(ptr %pool, i64 %n, i64 %hook) {
; CHECK: call void %fn(ptr %r)
; CHECK-LABEL: define internal void @enzpy.pool.drop(ptr %pool) {
; CHECK: call void @enzpy.pool.each(ptr %pool, i64 %n, i64 -32)
; CHECK: call void @free(ptr %pool)
; CHECK-LABEL: define internal void @enzpy.pool.park(ptr %slot, ptr %pool, i64 %used, i1 %failed) {
; CHECK: call void @enzpy.pool.each(ptr %pool, i64 %used, i64 -24)
; CHECK: %old = atomicrmw xchg ptr %slot, ptr %pool acq_rel
; CHECK: call void @enzpy.pool.drop(ptr %old)
; CHECK-LABEL: define internal void @enzpy.pool.release(ptr %slot) {
; CHECK: %old = atomicrmw xchg ptr %slot, ptr null acq_rel
; CHECK: call void @enzpy.pool.drop(ptr %old)
; CHECK-LABEL: define internal ptr @enzpy.pool.record(ptr %poolp, i64 %i, i64 %size, ptr %drop, ptr %fail) {
; CHECK: %new = call ptr @malloc(i64 %bytes)
; CHECK: call void @llvm.memset.p0.i64(ptr %new, i8 0, i64 %bytes, i1 false)
; CHECK: call void @llvm.memcpy.p0.p0.i64(ptr %new, ptr %pool0, i64 %oldbytes, i1 false)
; CHECK: call void @free(ptr %pool0)
; CHECK: call void %rdrop(ptr %r)
; CHECK: %blk = call ptr @malloc(i64 %total)
; CHECK: call void @llvm.memset.p0.i64(ptr %blk, i8 0, i64 %total, i1 false)
; CHECK-LABEL: define internal ptr @enzpy.pool.copy(ptr %kept, i64 %nbytes) {
; CHECK: call void @free(ptr %blk)
; CHECK: %new = call ptr @malloc(i64 %total)
; CHECK: call void @llvm.memset.p0.i64(ptr %data, i8 0, i64 %nbytes, i1 false)
