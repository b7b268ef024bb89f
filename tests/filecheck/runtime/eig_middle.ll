; runtime/eig_middle.ll: The middle of the symmetric eigendecomposition's derivatives.
; RUN: %opt -p runtime --helpers enzpy.eig_middle.f64,enzpy.eig_middle.f32 %s | %filecheck %s

; CHECK-LABEL: define internal void @enzpy.eig_middle.f64(i64 %n, ptr %t, ptr %w, ptr %dw, ptr %x) {
; CHECK: entry:
; CHECK: %empty = icmp sle i64 %n, 0
; CHECK: %nodw = icmp eq ptr %dw, null
; CHECK: br i1 %empty, label %done, label %col
; CHECK: col:
; CHECK: %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
; CHECK: %pwj = getelementptr double, ptr %w, i64 %j
; CHECK: %wj = load double, ptr %pwj
; CHECK: br label %row
; CHECK: row:
; CHECK: %i = phi i64 [ 0, %col ], [ %i1, %rownext ]
; CHECK: %jo = mul i64 %j, %n
; CHECK: %k = add i64 %jo, %i
; CHECK: %pt = getelementptr double, ptr %t, i64 %k
; CHECK: %px = getelementptr double, ptr %x, i64 %k
; CHECK: %diag = icmp eq i64 %i, %j
; CHECK: br i1 %diag, label %ondiag, label %off
; CHECK: ondiag:
; CHECK: br i1 %nodw, label %zero, label %fromdw
; CHECK: zero:
; CHECK: store double 0.0, ptr %px
; CHECK: br label %rownext
; CHECK: fromdw:
; CHECK: %pdw = getelementptr double, ptr %dw, i64 %i
; CHECK: %vdw = load double, ptr %pdw
; CHECK: store double %vdw, ptr %px
; CHECK: br label %rownext
; CHECK: off:
; CHECK: %pwi = getelementptr double, ptr %w, i64 %i
; CHECK: %wi = load double, ptr %pwi
; CHECK: %gap = fsub double %wj, %wi
; CHECK: %vt = load double, ptr %pt
; CHECK: %q = fdiv double %vt, %gap
; CHECK: %none = fcmp oeq double %vt, 0.0
; CHECK: %r = select i1 %none, double 0.0, double %q
; CHECK: store double %r, ptr %px
; CHECK: br label %rownext
; CHECK: rownext:
; CHECK: %i1 = add i64 %i, 1
; CHECK: %rmore = icmp slt i64 %i1, %n
; CHECK: br i1 %rmore, label %row, label %colnext
; CHECK: colnext:
; CHECK: %j1 = add i64 %j, 1
; CHECK: %cmore = icmp slt i64 %j1, %n
; CHECK: br i1 %cmore, label %col, label %done
; CHECK: done:
; CHECK: ret void
; CHECK-LABEL: define internal void @enzpy.eig_middle.f32(i64 %n, ptr %t, ptr %w, ptr %dw, ptr %x) {
; CHECK: store float 0.0, ptr %px
; CHECK: store float %vdw, ptr %px
; CHECK: store float %r, ptr %px
