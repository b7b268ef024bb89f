; runtime/diagonal.ll: The diagonal of a square matrix.
; RUN: %opt -p runtime --helpers enzpy.diagonal.f64,enzpy.diagonal.f32 %s | %filecheck %s

; CHECK-LABEL: define internal void @enzpy.diagonal.f64(i64 %n, ptr %src, i64 %lds, ptr %dst) {
; CHECK: entry:
; CHECK: %empty = icmp sle i64 %n, 0
; CHECK: br i1 %empty, label %done, label %loop
; CHECK: loop:
; CHECK: %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
; CHECK: %step = add i64 %lds, 1
; CHECK: %k = mul i64 %i, %step
; CHECK: %ps = getelementptr double, ptr %src, i64 %k
; CHECK: %v = load double, ptr %ps
; CHECK: %pd = getelementptr double, ptr %dst, i64 %i
; CHECK: store double %v, ptr %pd
; CHECK: %i1 = add i64 %i, 1
; CHECK: %more = icmp slt i64 %i1, %n
; CHECK: br i1 %more, label %loop, label %done
; CHECK: done:
; CHECK: ret void
; CHECK-LABEL: define internal void @enzpy.diagonal.f32(i64 %n, ptr %src, i64 %lds, ptr %dst) {
; CHECK: store float %v, ptr %pd
