; runtime/nrm2_tangent.ll: The tangent of the 2-norm, real and complex, per float type.
; RUN: %opt -p runtime --helpers enzpy.nrm2_tangent.f64,enzpy.cnrm2_tangent.f32 %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.nrm2_tangent.f64,enzpy.cnrm2_tangent.f32 %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal double @enzpy.nrm2_tangent.f64(i64 %n, ptr %x, i64 %inc, ptr %dx) {
; CHECK: entry:
; CHECK: %parts = mul i64 %n, 1
; CHECK: %bad = icmp sle i64 %inc, 0
; CHECK: %empty = icmp sle i64 %n, 0
; CHECK: %skip = or i1 %bad, %empty
; CHECK: br i1 %skip, label %zero, label %sum
; CHECK: sum:
; CHECK: %i = phi i64 [ 0, %entry ], [ %i1, %sum ]
; CHECK: %acc = phi double [ 0.0, %entry ], [ %acc1, %sum ]
; CHECK: %dot = phi double [ 0.0, %entry ], [ %dot1, %sum ]
; CHECK: %ke = udiv i64 %i, 1
; CHECK: %kp = urem i64 %i, 1
; CHECK: %kei = mul i64 %ke, %inc
; CHECK: %k0 = mul i64 %kei, 1
; CHECK: %k = add i64 %k0, %kp
; CHECK: %q = getelementptr double, ptr %x, i64 %k
; CHECK: %qd = getelementptr double, ptr %dx, i64 %k
; CHECK: %v = load double, ptr %q
; CHECK: %vd = load double, ptr %qd
; CHECK: %vv = fmul double %v, %v
; CHECK: %acc1 = fadd double %acc, %vv
; CHECK: %xd = fmul double %v, %vd
; CHECK: %dot1 = fadd double %dot, %xd
; CHECK: %i1 = add i64 %i, 1
; CHECK: %more = icmp slt i64 %i1, %parts
; CHECK: br i1 %more, label %sum, label %root
; CHECK: root:
; CHECK: %norm = call double @llvm.sqrt.f64(double %acc1)
; CHECK: %flat = fcmp oeq double %norm, 0.0
; CHECK: %t = fdiv double %dot1, %norm
; CHECK: %r = select i1 %flat, double 0.0, double %t
; CHECK: ret double %r
; CHECK: zero:
; CHECK: ret double 0.0
; CHECK-LABEL: define internal float @enzpy.cnrm2_tangent.f32(i64 %n, ptr %x, i64 %inc, ptr %dx) {
; CHECK: entry:
; CHECK: %parts = mul i64 %n, 2
; CHECK: %bad = icmp sle i64 %inc, 0
; CHECK: %empty = icmp sle i64 %n, 0
; CHECK: %skip = or i1 %bad, %empty
; CHECK: br i1 %skip, label %zero, label %sum
; CHECK: sum:
; CHECK: %i = phi i64 [ 0, %entry ], [ %i1, %sum ]
; CHECK: %acc = phi float [ 0.0, %entry ], [ %acc1, %sum ]
; CHECK: %dot = phi float [ 0.0, %entry ], [ %dot1, %sum ]
; CHECK: %ke = udiv i64 %i, 2
; CHECK: %kp = urem i64 %i, 2
; CHECK: %kei = mul i64 %ke, %inc
; CHECK: %k0 = mul i64 %kei, 2
; CHECK: %k = add i64 %k0, %kp
; CHECK: %q = getelementptr float, ptr %x, i64 %k
; CHECK: %qd = getelementptr float, ptr %dx, i64 %k
; CHECK: %v = load float, ptr %q
; CHECK: %vd = load float, ptr %qd
; CHECK: %vv = fmul float %v, %v
; CHECK: %acc1 = fadd float %acc, %vv
; CHECK: %xd = fmul float %v, %vd
; CHECK: %dot1 = fadd float %dot, %xd
; CHECK: %i1 = add i64 %i, 1
; CHECK: %more = icmp slt i64 %i1, %parts
; CHECK: br i1 %more, label %sum, label %root
; CHECK: root:
; CHECK: %norm = call float @llvm.sqrt.f32(float %acc1)
; CHECK: %flat = fcmp oeq float %norm, 0.0
; CHECK: %t = fdiv float %dot1, %norm
; CHECK: %r = select i1 %flat, float 0.0, float %t
; CHECK: ret float %r
; CHECK: zero:
; CHECK: ret float 0.0
; DECL-DAG: declare double @llvm.sqrt.f64(double)
; DECL-DAG: declare float @llvm.sqrt.f32(float)
