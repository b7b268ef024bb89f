; runtime/nrm2_adjoint.ll: The adjoint of the 2-norm, real and complex (PARTS 2), per float type.
; RUN: %opt -p runtime --helpers enzpy.nrm2_adjoint.f64,enzpy.cnrm2_adjoint.f32 %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.nrm2_adjoint.f64,enzpy.cnrm2_adjoint.f32 %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal double @enzpy.nrm2_adjoint.f64(i64 %n, ptr %x, i64 %inc, ptr %dx, double %d) {
; CHECK: entry:
; CHECK: %parts = mul i64 %n, 1
; CHECK: %bad = icmp sle i64 %inc, 0
; CHECK: %empty = icmp sle i64 %n, 0
; CHECK: %skip = or i1 %bad, %empty
; CHECK: br i1 %skip, label %zero, label %sum
; CHECK: sum:
; CHECK: %i = phi i64 [ 0, %entry ], [ %i1, %sum ]
; CHECK: %acc = phi double [ 0.0, %entry ], [ %acc1, %sum ]
; CHECK: %ke = udiv i64 %i, 1
; CHECK: %kp = urem i64 %i, 1
; CHECK: %kei = mul i64 %ke, %inc
; CHECK: %k0 = mul i64 %kei, 1
; CHECK: %k = add i64 %k0, %kp
; CHECK: %q = getelementptr double, ptr %x, i64 %k
; CHECK: %v = load double, ptr %q
; CHECK: %vv = fmul double %v, %v
; CHECK: %acc1 = fadd double %acc, %vv
; CHECK: %i1 = add i64 %i, 1
; CHECK: %more = icmp slt i64 %i1, %parts
; CHECK: br i1 %more, label %sum, label %root
; CHECK: root:
; CHECK: %norm = call double @llvm.sqrt.f64(double %acc1)
; CHECK: %nodx = icmp eq ptr %dx, null
; CHECK: %flat = fcmp oeq double %norm, 0.0
; CHECK: %dzero = fcmp oeq double %d, 0.0
; CHECK: %huge = fcmp uge double %norm, 0x7FF0000000000000
; CHECK: %strong = and i1 %dzero, %huge
; CHECK: %noadd0 = or i1 %nodx, %flat
; CHECK: %noadd = or i1 %noadd0, %strong
; CHECK: br i1 %noadd, label %out, label %add
; CHECK: add:
; CHECK: %scale = fdiv double %d, %norm
; CHECK: br label %addloop
; CHECK: addloop:
; CHECK: %j = phi i64 [ 0, %add ], [ %j1, %addloop ]
; CHECK: %kje = udiv i64 %j, 1
; CHECK: %kjp = urem i64 %j, 1
; CHECK: %kjei = mul i64 %kje, %inc
; CHECK: %kj0 = mul i64 %kjei, 1
; CHECK: %kj = add i64 %kj0, %kjp
; CHECK: %qx = getelementptr double, ptr %x, i64 %kj
; CHECK: %qd = getelementptr double, ptr %dx, i64 %kj
; CHECK: %vx = load double, ptr %qx
; CHECK: %vd = load double, ptr %qd
; CHECK: %t = fmul double %scale, %vx
; CHECK: %nd = fadd double %vd, %t
; CHECK: store double %nd, ptr %qd
; CHECK: %j1 = add i64 %j, 1
; CHECK: %jmore = icmp slt i64 %j1, %parts
; CHECK: br i1 %jmore, label %addloop, label %out
; CHECK: out:
; CHECK: ret double %norm
; CHECK: zero:
; CHECK: ret double 0.0
; CHECK-LABEL: define internal float @enzpy.cnrm2_adjoint.f32(i64 %n, ptr %x, i64 %inc, ptr %dx, float %d) {
; CHECK: entry:
; CHECK: %parts = mul i64 %n, 2
; CHECK: %bad = icmp sle i64 %inc, 0
; CHECK: %empty = icmp sle i64 %n, 0
; CHECK: %skip = or i1 %bad, %empty
; CHECK: br i1 %skip, label %zero, label %sum
; CHECK: sum:
; CHECK: %i = phi i64 [ 0, %entry ], [ %i1, %sum ]
; CHECK: %acc = phi float [ 0.0, %entry ], [ %acc1, %sum ]
; CHECK: %ke = udiv i64 %i, 2
; CHECK: %kp = urem i64 %i, 2
; CHECK: %kei = mul i64 %ke, %inc
; CHECK: %k0 = mul i64 %kei, 2
; CHECK: %k = add i64 %k0, %kp
; CHECK: %q = getelementptr float, ptr %x, i64 %k
; CHECK: %v = load float, ptr %q
; CHECK: %vv = fmul float %v, %v
; CHECK: %acc1 = fadd float %acc, %vv
; CHECK: %i1 = add i64 %i, 1
; CHECK: %more = icmp slt i64 %i1, %parts
; CHECK: br i1 %more, label %sum, label %root
; CHECK: root:
; CHECK: %norm = call float @llvm.sqrt.f32(float %acc1)
; CHECK: %nodx = icmp eq ptr %dx, null
; CHECK: %flat = fcmp oeq float %norm, 0.0
; CHECK: %dzero = fcmp oeq float %d, 0.0
; CHECK: %huge = fcmp uge float %norm, 0x7FF0000000000000
; CHECK: %strong = and i1 %dzero, %huge
; CHECK: %noadd0 = or i1 %nodx, %flat
; CHECK: %noadd = or i1 %noadd0, %strong
; CHECK: br i1 %noadd, label %out, label %add
; CHECK: add:
; CHECK: %scale = fdiv float %d, %norm
; CHECK: br label %addloop
; CHECK: addloop:
; CHECK: %j = phi i64 [ 0, %add ], [ %j1, %addloop ]
; CHECK: %kje = udiv i64 %j, 2
; CHECK: %kjp = urem i64 %j, 2
; CHECK: %kjei = mul i64 %kje, %inc
; CHECK: %kj0 = mul i64 %kjei, 2
; CHECK: %kj = add i64 %kj0, %kjp
; CHECK: %qx = getelementptr float, ptr %x, i64 %kj
; CHECK: %qd = getelementptr float, ptr %dx, i64 %kj
; CHECK: %vx = load float, ptr %qx
; CHECK: %vd = load float, ptr %qd
; CHECK: %t = fmul float %scale, %vx
; CHECK: %nd = fadd float %vd, %t
; CHECK: store float %nd, ptr %qd
; CHECK: %j1 = add i64 %j, 1
; CHECK: %jmore = icmp slt i64 %j1, %parts
; CHECK: br i1 %jmore, label %addloop, label %out
; CHECK: out:
; CHECK: ret float %norm
; CHECK: zero:
; CHECK: ret float 0.0
; DECL-DAG: declare double @llvm.sqrt.f64(double)
; DECL-DAG: declare float @llvm.sqrt.f32(float)
