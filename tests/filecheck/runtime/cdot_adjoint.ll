; runtime/cdot_adjoint.ll: The reverse of the complex dot products (dotu, dotc).
; RUN: %opt -p runtime --helpers enzpy.cdot_adjoint.f64,enzpy.cdot_adjoint.f32 %s | %filecheck %s

; CHECK-LABEL: define internal void @enzpy.cdot_adjoint.f64(i64 %n, ptr %x, ptr %y, ptr %dx, ptr %dy, double %dre, double %dim, i1 %c) {
; CHECK: entry:
; CHECK: %empty = icmp sle i64 %n, 0
; CHECK: %rz = fcmp oeq double %dre, 0.0
; CHECK: %iz = fcmp oeq double %dim, 0.0
; CHECK: %dz = and i1 %rz, %iz
; CHECK: %skip = or i1 %empty, %dz
; CHECK: %ndim = fneg double %dim
; CHECK: %axi = select i1 %c, double %ndim, double %dim
; CHECK: %sgn = select i1 %c, double 1.0, double -1.0
; CHECK: br i1 %skip, label %done, label %loop
; CHECK: loop:
; CHECK: %i = phi i64 [ 0, %entry ], [ %i1, %next ]
; CHECK: %k = shl i64 %i, 1
; CHECK: %ki = or i64 %k, 1
; CHECK: %pxr = getelementptr double, ptr %x, i64 %k
; CHECK: %pxi = getelementptr double, ptr %x, i64 %ki
; CHECK: %pyr = getelementptr double, ptr %y, i64 %k
; CHECK: %pyi = getelementptr double, ptr %y, i64 %ki
; CHECK: %xr = load double, ptr %pxr
; CHECK: %xi0 = load double, ptr %pxi
; CHECK: %yr = load double, ptr %pyr
; CHECK: %yi0 = load double, ptr %pyi
; CHECK: %xi = fmul double %xi0, %sgn
; CHECK: %yi = fmul double %yi0, %sgn
; CHECK: %hasdx = icmp ne ptr %dx, null
; CHECK: br i1 %hasdx, label %adx, label %checky
; CHECK: adx:
; CHECK: %a1 = fmul double %dre, %yr
; CHECK: %a2 = fmul double %axi, %yi
; CHECK: %ar = fsub double %a1, %a2
; CHECK: %a3 = fmul double %dre, %yi
; CHECK: %a4 = fmul double %axi, %yr
; CHECK: %ai = fadd double %a3, %a4
; CHECK: %pdxr = getelementptr double, ptr %dx, i64 %k
; CHECK: %pdxi = getelementptr double, ptr %dx, i64 %ki
; CHECK: %odxr = load double, ptr %pdxr
; CHECK: %odxi = load double, ptr %pdxi
; CHECK: %ndxr = fadd double %odxr, %ar
; CHECK: %ndxi = fadd double %odxi, %ai
; CHECK: store double %ndxr, ptr %pdxr
; CHECK: store double %ndxi, ptr %pdxi
; CHECK: br label %checky
; CHECK: checky:
; CHECK: %hasdy = icmp ne ptr %dy, null
; CHECK: br i1 %hasdy, label %ady, label %next
; CHECK: ady:
; CHECK: %b1 = fmul double %dre, %xr
; CHECK: %b2 = fmul double %dim, %xi
; CHECK: %br = fsub double %b1, %b2
; CHECK: %b3 = fmul double %dre, %xi
; CHECK: %b4 = fmul double %dim, %xr
; CHECK: %bi = fadd double %b3, %b4
; CHECK: %pdyr = getelementptr double, ptr %dy, i64 %k
; CHECK: %pdyi = getelementptr double, ptr %dy, i64 %ki
; CHECK: %odyr = load double, ptr %pdyr
; CHECK: %odyi = load double, ptr %pdyi
; CHECK: %ndyr = fadd double %odyr, %br
; CHECK: %ndyi = fadd double %odyi, %bi
; CHECK: store double %ndyr, ptr %pdyr
; CHECK: store double %ndyi, ptr %pdyi
; CHECK: br label %next
; CHECK: next:
; CHECK: %i1 = add i64 %i, 1
; CHECK: %more = icmp slt i64 %i1, %n
; CHECK: br i1 %more, label %loop, label %done
; CHECK: done:
; CHECK: ret void
; CHECK-LABEL: define internal void @enzpy.cdot_adjoint.f32(i64 %n, ptr %x, ptr %y, ptr %dx, ptr %dy, float %dre, float %dim, i1 %c) {
; CHECK: store float %ndxr, ptr %pdxr
; CHECK: store float %ndxi, ptr %pdxi
; CHECK: store float %ndyr, ptr %pdyr
; CHECK: store float %ndyi, ptr %pdyi
