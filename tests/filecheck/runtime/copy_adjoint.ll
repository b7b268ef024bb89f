; runtime/copy_adjoint.ll: The reverse of a float memcpy, per float type.
; RUN: %opt -p runtime --helpers enzpy.copy_adjoint.f64,enzpy.copy_adjoint.f32 %s | %filecheck %s

; CHECK-LABEL: define internal void @enzpy.copy_adjoint.f64(ptr %dst, ptr %src, i64 %bytes) {
; CHECK: %n = udiv i64 %bytes, 8
; CHECK: %pd = getelementptr double, ptr %dst, i64 %i
; CHECK: %ps = getelementptr double, ptr %src, i64 %i
; CHECK: %d = load double, ptr %pd
; CHECK: %s = load double, ptr %ps
; CHECK: %t = fadd double %s, %d
; CHECK: store double %t, ptr %ps
; CHECK: store double 0.0, ptr %pd
; CHECK-LABEL: define internal void @enzpy.copy_adjoint.f32(ptr %dst, ptr %src, i64 %bytes) {
; CHECK: %n = udiv i64 %bytes, 4
; CHECK: %pd = getelementptr float, ptr %dst, i64 %i
; CHECK: %ps = getelementptr float, ptr %src, i64 %i
; CHECK: %d = load float, ptr %pd
; CHECK: %s = load float, ptr %ps
; CHECK: %t = fadd float %s, %d
; CHECK: store float %t, ptr %ps
; CHECK: store float 0.0, ptr %pd
