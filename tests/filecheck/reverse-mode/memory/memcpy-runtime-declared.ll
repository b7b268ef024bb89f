; With --runtime declare, the helper the memcpy's reverse calls (runtime/copy_adjoint.ll, a
; loop that allocates nothing) is only declared: the host compiles it once per process
; (runtime/shared.py). The default, --runtime define, puts its definition in the module.
; RUN: %opt -p reverse-mode --activity dup,dup,const --runtime declare %s | %filecheck %s

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  %bytes = shl i64 %n, 3
  call void @llvm.memcpy.p0.p0.i64(ptr %y, ptr %x, i64 %bytes, i1 false)
  %a = load double, ptr %y, align 8
  %m = fmul double %a, %a
  store double %m, ptr %y, align 8
  ret void
}
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

; CHECK-LABEL: define void @grad(
; CHECK: call void @enzpy.copy_adjoint.f64(ptr %y.shadow, ptr %x.shadow, i64
; CHECK-NOT: define {{.*}}@enzpy.copy_adjoint.f64(
; CHECK: declare void @enzpy.copy_adjoint.f64(ptr %dst, ptr %src, i64 %bytes)
; CHECK-NOT: define {{.*}}@enzpy.copy_adjoint.f64(

