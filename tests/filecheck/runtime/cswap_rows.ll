; runtime/cswap_rows.ll: The row interchanges of a complex matrix: both parts swapped.
; RUN: %opt -p runtime --helpers enzpy.cswap_rows.f64,enzpy.cswap_rows.f32 %s | %filecheck %s

; CHECK-LABEL: define internal void @enzpy.cswap_rows.f64(i64 %n, i64 %cols, ptr %ipiv, ptr %p, i64 %ld, i64 %back) {
; CHECK: entry:
; CHECK: %norows = icmp sle i64 %n, 0
; CHECK: %nocols = icmp sle i64 %cols, 0
; CHECK: %empty = or i1 %norows, %nocols
; CHECK: br i1 %empty, label %done, label %step
; CHECK: step:
; CHECK: %k = phi i64 [ 0, %entry ], [ %k1, %stepnext ]
; CHECK: %rev = sub i64 %n, 1
; CHECK: %revk = sub i64 %rev, %k
; CHECK: %isback = icmp ne i64 %back, 0
; CHECK: %i = select i1 %isback, i64 %revk, i64 %k
; CHECK: %pp = getelementptr i32, ptr %ipiv, i64 %i
; CHECK: %p32 = load i32, ptr %pp
; CHECK: %p1 = sext i32 %p32 to i64
; CHECK: %r = sub i64 %p1, 1
; CHECK: %same = icmp eq i64 %r, %i
; CHECK: br i1 %same, label %stepnext, label %col
; CHECK: col:
; CHECK: %j = phi i64 [ 0, %step ], [ %j1, %col ]
; CHECK: %jo = mul i64 %j, %ld
; CHECK: %ai0 = add i64 %jo, %i
; CHECK: %ar0 = add i64 %jo, %r
; CHECK: %ai = shl i64 %ai0, 1
; CHECK: %ar = shl i64 %ar0, 1
; CHECK: %qi = getelementptr double, ptr %p, i64 %ai
; CHECK: %qr = getelementptr double, ptr %p, i64 %ar
; CHECK: %vi = load double, ptr %qi
; CHECK: %vr = load double, ptr %qr
; CHECK: store double %vr, ptr %qi
; CHECK: store double %vi, ptr %qr
; CHECK: %qii = getelementptr double, ptr %qi, i64 1
; CHECK: %qri = getelementptr double, ptr %qr, i64 1
; CHECK: %wi = load double, ptr %qii
; CHECK: %wr = load double, ptr %qri
; CHECK: store double %wr, ptr %qii
; CHECK: store double %wi, ptr %qri
; CHECK: %j1 = add i64 %j, 1
; CHECK: %cmore = icmp slt i64 %j1, %cols
; CHECK: br i1 %cmore, label %col, label %stepnext
; CHECK: stepnext:
; CHECK: %k1 = add i64 %k, 1
; CHECK: %more = icmp slt i64 %k1, %n
; CHECK: br i1 %more, label %step, label %done
; CHECK: done:
; CHECK: ret void
; CHECK-LABEL: define internal void @enzpy.cswap_rows.f32(i64 %n, i64 %cols, ptr %ipiv, ptr %p, i64 %ld, i64 %back) {
; CHECK: store float %vr, ptr %qi
; CHECK: store float %vi, ptr %qr
; CHECK: store float %wr, ptr %qii
; CHECK: store float %wi, ptr %qri
