; runtime/grid.ll: The loop of the elementwise matrix helpers, filled for scale_matrix.
; RUN: %opt -p runtime --helpers enzpy.scale_matrix.f64,enzpy.scale_matrix.f32 %s | %filecheck %s

; CHECK-LABEL: define internal void @enzpy.scale_matrix.f64(i64 %rows, i64 %cols, ptr %p, i64 %ld, double %beta) {
; CHECK: entry:
; CHECK: %norows = icmp sle i64 %rows, 0
; CHECK: %nocols = icmp sle i64 %cols, 0
; CHECK: %none = or i1 %norows, %nocols
; CHECK: br i1 %none, label %done, label %col
; CHECK: col:
; CHECK: %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
; CHECK: %base = mul i64 %j, %ld
; CHECK: br label %row
; CHECK: row:
; CHECK: %i = phi i64 [ 0, %col ], [ %i1, %row ]
; CHECK: %zero = fcmp oeq double %beta, 0.0
; CHECK: %k = add i64 %base, %i
; CHECK: %q = getelementptr double, ptr %p, i64 %k
; CHECK: %v = load double, ptr %q
; CHECK: %s = fmul double %v, %beta
; CHECK: %w = select i1 %zero, double 0.0, double %s
; CHECK: store double %w, ptr %q
; CHECK: %i1 = add i64 %i, 1
; CHECK: %rmore = icmp slt i64 %i1, %rows
; CHECK: br i1 %rmore, label %row, label %colnext
; CHECK: colnext:
; CHECK: %j1 = add i64 %j, 1
; CHECK: %cmore = icmp slt i64 %j1, %cols
; CHECK: br i1 %cmore, label %col, label %done
; CHECK: done:
; CHECK: ret void
; CHECK-LABEL: define internal void @enzpy.scale_matrix.f32(i64 %rows, i64 %cols, ptr %p, i64 %ld, float %beta) {
; CHECK: store float %w, ptr %q
