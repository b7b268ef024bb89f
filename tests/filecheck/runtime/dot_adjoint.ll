; runtime/dot_adjoint.ll: The reverse of a dot product, per float type, under the strong-zero guard.
; RUN: %opt -p runtime --helpers enzpy.dot_adjoint.f64,enzpy.dot_adjoint.f32 %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.dot_adjoint.f64,enzpy.dot_adjoint.f32 %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal void @enzpy.dot_adjoint.f64(i64 %n, ptr %x, ptr %y, ptr %dx, ptr %dy, double %d) {
; CHECK: %dnz = fcmp une double %d, 0.0
; CHECK: %px = getelementptr double, ptr %x, i64 %i
; CHECK: %py = getelementptr double, ptr %y, i64 %i
; CHECK: %vx = load double, ptr %px
; CHECK: %vy = load double, ptr %py
; CHECK: %pdx = getelementptr double, ptr %dx, i64 %i
; CHECK: %odx = load double, ptr %pdx
; CHECK: %ay = call double @llvm.fabs.f64(double %vy)
; CHECK: %fy = fcmp olt double %ay, 0x7FF0000000000000
; CHECK: %ndx = fadd double %odx, %tdx
; CHECK: store double %ndx, ptr %pdx
; CHECK: %pdy = getelementptr double, ptr %dy, i64 %i
; CHECK: %ody = load double, ptr %pdy
; CHECK: %ax = call double @llvm.fabs.f64(double %vx)
; CHECK: %fx = fcmp olt double %ax, 0x7FF0000000000000
; CHECK: %qx = fmul double %d, %vx
; CHECK: %tdy = select i1 %kx, double %qx, double 0.0
; CHECK: %ndy = fadd double %ody, %tdy
; CHECK: store double %ndy, ptr %pdy
; CHECK-LABEL: define internal void @enzpy.dot_adjoint.f32(i64 %n, ptr %x, ptr %y, ptr %dx, ptr %dy, float %d) {
; CHECK: %dnz = fcmp une float %d, 0.0
; CHECK: %px = getelementptr float, ptr %x, i64 %i
; CHECK: %py = getelementptr float, ptr %y, i64 %i
; CHECK: %vx = load float, ptr %px
; CHECK: %vy = load float, ptr %py
; CHECK: %pdx = getelementptr float, ptr %dx, i64 %i
; CHECK: %odx = load float, ptr %pdx
; CHECK: %ay = call float @llvm.fabs.f32(float %vy)
; CHECK: %fy = fcmp olt float %ay, 0x7FF0000000000000
; CHECK: %ndx = fadd float %odx, %tdx
; CHECK: store float %ndx, ptr %pdx
; CHECK: %pdy = getelementptr float, ptr %dy, i64 %i
; CHECK: %ody = load float, ptr %pdy
; CHECK: %ax = call float @llvm.fabs.f32(float %vx)
; CHECK: %fx = fcmp olt float %ax, 0x7FF0000000000000
; CHECK: %qx = fmul float %d, %vx
; CHECK: %tdy = select i1 %kx, float %qx, float 0.0
; CHECK: %ndy = fadd float %ody, %tdy
; CHECK: store float %ndy, ptr %pdy

; DECL-DAG: declare double @llvm.fabs.f64(double)
; DECL-DAG: declare float @llvm.fabs.f32(float)
