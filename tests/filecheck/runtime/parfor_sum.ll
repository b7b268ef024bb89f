; runtime/parfor_sum.ll: Privatised shadow copies of a parallel loop added into the shadow.
; RUN: %opt -p runtime --helpers enzpy.parfor.sum.f32 %s | %filecheck %s

; CHECK-LABEL: define internal void @enzpy.parfor.sum.f32(ptr %dst, ptr %copies, i64 %ncopies, i64 %count) {
; CHECK: %ps = getelementptr float, ptr %src, i64 %i
; CHECK: %pd = getelementptr float, ptr %dst, i64 %i
; CHECK: %vs = load float, ptr %ps
; CHECK: %vd = load float, ptr %pd
; CHECK: %sum = fadd float %vd, %vs
; CHECK: store float %sum, ptr %pd
