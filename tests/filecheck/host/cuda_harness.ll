; enzyme_py/cuda/harness.ll: the CPU harness's IR, every piece filled (enzyme_py/cuda/host_ir.py).
; RUN: %python -m enzyme_py.cuda.host_ir | %filecheck %s

; CHECK-LABEL: define internal double @__nv_powi(double %x, i32 %n) {
; CHECK: %f = sitofp i32 %n to double
; CHECK: %r = call double @pow(double %x, double %f)
; CHECK: declare double @pow(double, double)
; CHECK-LABEL: define internal float @__nv_powif(float %x, i32 %n) {
; CHECK: %r = call float @powf(float %x, float %f)
; CHECK-LABEL: define internal double @__nv_rsqrt(double %x) {
; CHECK: %s = call double @llvm.sqrt.f64(double %x)
; CHECK: %r = fdiv double 1.0, %s
; CHECK-LABEL: define internal float @__nv_rsqrtf(float %x) {
; CHECK: %s = call float @llvm.sqrt.f32(float %x)
; CHECK-LABEL: define internal double @__nv_rcbrt(double %x) {
; CHECK: %s = call double @cbrt(double %x)
; CHECK-LABEL: define internal double @__nv_sinpi(double %x) {
; CHECK: %a = fmul double %x, 0x400921FB54442D18
; CHECK: %r = call double @sin(double %a)
; CHECK-LABEL: define internal float @__nv_sinpif(float %x) {
; CHECK: %a = fmul float %x, 0x400921FB60000000
; CHECK-LABEL: define internal double @__nv_cospi(double %x) {
; CHECK: %r = call double @cos(double %a)
; CHECK-LABEL: define internal double @__nv_normcdf(double %x) {
; CHECK: %a = fmul double %x, 0xBFE6A09E667F3BCD
; CHECK: %e = call double @erfc(double %a)
; CHECK: %r = fmul double %e, 0.5
; CHECK-LABEL: define internal float @__nv_fast_fdividef(float %a, float %b) {
; CHECK: %r = fdiv float %a, %b
; CHECK: declare void @enzpy_host_barrier()
; CHECK-LABEL: define internal void @enzpy.host.barrier(i32 %id) {
; CHECK: call void @enzpy_host_barrier()
; CHECK-LABEL: define internal i32 @enzpy.host.activemask() {
; CHECK: ret i32 0
; CHECK-LABEL: define internal i32 @enzpy.host.match(i32 %m, i64 %v) {
; CHECK: ret i32 0
; CHECK-LABEL: define internal void @enzpy.host.warpsync(i32 %m) {
; CHECK: call i32 @enzpy_host_shfl(i32 4, i32 %m, i32 0, i32 0, i32 31, ptr null)
; CHECK-LABEL: define internal i32 @enzpy.host.sreg.tid.x() {
; CHECK: %v = call i32 @enzpy_host_sreg(i32 0)
; CHECK-LABEL: define internal i32 @enzpy.host.shfl.down.i32(i32 %m, i32 %v, i32 %b, i32 %c) {
; CHECK: %bits = add i32 %v, 0
; CHECK: %r = call i32 @enzpy_host_shfl(i32 2, i32 %m, i32 %bits, i32 %b, i32 %c, ptr %p)
; CHECK: ret i32 %r
; CHECK-LABEL: define internal float @enzpy.host.shfl.down.f32(i32 %m, float %v, i32 %b, i32 %c) {
; CHECK: %bits = bitcast float %v to i32
; CHECK: %f = bitcast i32 %r to float
; CHECK: ret float %f
; CHECK-LABEL: define internal { i32, i1 } @enzpy.host.shfl.down.i32p(i32 %m, i32 %v, i32 %b, i32 %c) {
; CHECK: %pb = load i8, ptr %p
; CHECK: %s1 = insertvalue { i32, i1 } %s0, i1 %pi, 1
; CHECK: ret { i32, i1 } %s1
