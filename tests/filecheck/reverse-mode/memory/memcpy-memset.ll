; Adjoints of memset and memcpy (transforms/reverse/shadows/memory.py): walking back, the memset of x
; zeroes x's shadow (what it overwrote gets no derivative), then the memcpy's reverse moves y's
; shadow into x's and zeroes it (runtime/copy_adjoint.ll, per float type).
; RUN: %opt -p reverse-mode --activity dup,dup,dup,const --noalias %s | %filecheck %s

define void @f(ptr noalias %x, ptr noalias %y, ptr noalias %z, i64 %n) {
entry:
  %bytes = shl i64 %n, 3
  call void @llvm.memcpy.p0.p0.i64(ptr %y, ptr %x, i64 %bytes, i1 false)
  call void @llvm.memset.p0.i64(ptr %x, i8 0, i64 %bytes, i1 false)
  %a = load double, ptr %y, align 8
  %m = fmul double %a, %a
  store double %m, ptr %z, align 8
  ret void
}
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; CHECK-LABEL: define void @grad(
; CHECK: fwd.entry:
; CHECK: call void @llvm.memcpy.p0.p0.i64(ptr %y, ptr %x, i64 %bytes, i1 false)
; CHECK-NEXT: call void @llvm.memset.p0.i64(ptr %x, i8 0, i64 %bytes, i1 false)
; CHECK: rev.entry:
; CHECK: store double %{{.*}}, ptr %y.shadow
; CHECK: call void @llvm.memset.p0.i64(ptr %x.shadow, i8 0, i64 [[BYTES:%.*]], i1 false)
; CHECK-NEXT: call void @enzpy.copy_adjoint.f64(ptr %y.shadow, ptr %x.shadow, i64 [[BYTES]])
; CHECK-LABEL: define internal void @enzpy.copy_adjoint.f64(ptr %dst, ptr %src, i64 %bytes)
