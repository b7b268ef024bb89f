; runtime/checkpoint_schedule.ll: The checkpoint schedule: frames parked in a pool; --fresh: a fresh frame per call.
; RUN: %opt -p runtime --helpers enzpy.ckpt.frame %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.ckpt.frame --fresh %s | %filecheck %s --check-prefix=FRESH
; RUN: %opt -p runtime --helpers enzpy.ckpt.frame %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal ptr @enzpy.ckpt.frame(i64 %S, i64 %budget, ptr %pool) {
; CHECK: %parked = atomicrmw xchg ptr %pool, ptr null acq_rel, align 8
; CHECK-LABEL: define internal void @enzpy.ckpt.trips(ptr %f, i64 %n) {
; CHECK-LABEL: define internal void @enzpy.ckpt.aim(ptr %f, i64 %k) {
; CHECK-LABEL: define internal i64 @enzpy.ckpt.get(ptr %f, i64 %field) {
; CHECK-LABEL: define internal void @enzpy.ckpt.set(ptr %f, i64 %field, i64 %v) {
; CHECK-LABEL: define internal void @enzpy.ckpt.add(ptr %f, i64 %field, i64 %v) {
; CHECK-LABEL: define internal ptr @enzpy.ckpt.push(ptr %f, i64 %k) {
; CHECK-LABEL: define internal void @enzpy.ckpt.thin(ptr %f) {
; CHECK-LABEL: define internal i1 @enzpy.ckpt.wants(ptr %f, i64 %k) {
; CHECK-LABEL: define internal ptr @enzpy.ckpt.latest(ptr %f, i64 %t) {
; CHECK-LABEL: define internal i64 @enzpy.ckpt.latest_step(ptr %f) {
; CHECK-LABEL: define internal i64 @enzpy.ckpt.split(i64 %l, i64 %s) {
; CHECK-LABEL: define internal i64 @enzpy.ckpt.next(ptr %f, i64 %p, i64 %t) {
; CHECK-LABEL: define internal void @enzpy.ckpt.release(ptr %f, ptr %pool) {
; CHECK: %old = atomicrmw xchg ptr %pool, ptr %f acq_rel, align 8
; CHECK: call void @enzpy.ckpt.drop(ptr %old)
; CHECK-LABEL: define internal void @enzpy.ckpt.drop(ptr %f) {

; FRESH-LABEL: define internal ptr @enzpy.ckpt.frame(i64 %S, i64 %budget, ptr %pool) {
; FRESH: %parked = select i1 true, ptr null, ptr %pool
; FRESH-LABEL: define internal void @enzpy.ckpt.release(ptr %f, ptr %pool) {
; FRESH: %old = select i1 true, ptr %f, ptr %pool
; FRESH: call void @enzpy.ckpt.drop(ptr %old)

; DECL-DAG: declare ptr @malloc(i64)
; DECL-DAG: declare void @free(ptr)
; DECL-DAG: declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
; DECL-DAG: declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
; DECL-DAG: declare i64 @write(i32, ptr, i64)
; DECL-DAG: declare void @abort()
