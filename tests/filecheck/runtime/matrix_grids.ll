; runtime/matrix_grids.ll: Pieces of matrix_grids.ll in grid.ll: a head, a square map and its complex twin (ONE), a Hermitian map, shared pieces, ROW and a tail.
; RUN: %opt -p runtime --helpers enzpy.cunit_lower_of.f64,enzpy.rank1.f64,enzpy.unit_lower_of.f64,enzpy.hfold_upper.f32,enzpy.copy_rect.f64,enzpy.svd_middle.f64,enzpy.csvd_middle.f32,enzpy.sum_abs.f64,enzpy.cupper_rect.f64,enzpy.crank1.f32 %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.cunit_lower_of.f64,enzpy.rank1.f64,enzpy.unit_lower_of.f64,enzpy.hfold_upper.f32,enzpy.copy_rect.f64,enzpy.svd_middle.f64,enzpy.csvd_middle.f32,enzpy.sum_abs.f64,enzpy.cupper_rect.f64,enzpy.crank1.f32 %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal void @enzpy.cunit_lower_of.f64(i64 %n, ptr %src, i64 %lds, ptr %dst, i64 %ldd) {
; CHECK: entry:
; CHECK: %n2 = shl i64 %n, 1
; CHECK: %norows = icmp sle i64 %n2, 0
; CHECK: %nocols = icmp sle i64 %n, 0
; CHECK: %none = or i1 %norows, %nocols
; CHECK: br i1 %none, label %done, label %col
; CHECK: col:
; CHECK: %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
; CHECK: br label %row
; CHECK: row:
; CHECK: %i = phi i64 [ 0, %col ], [ %i1, %row ]
; CHECK: %ci = lshr i64 %i, 1
; CHECK: %part = and i64 %i, 1
; CHECK: %js = mul i64 %j, %lds
; CHECK: %ij0 = add i64 %js, %ci
; CHECK: %ij1 = shl i64 %ij0, 1
; CHECK: %ij = or i64 %ij1, %part
; CHECK: %sij = getelementptr double, ptr %src, i64 %ij
; CHECK: %is = mul i64 %ci, %lds
; CHECK: %ji0 = add i64 %is, %j
; CHECK: %ji1 = shl i64 %ji0, 1
; CHECK: %ji = or i64 %ji1, %part
; CHECK: %sji = getelementptr double, ptr %src, i64 %ji
; CHECK: %jd = mul i64 %j, %ldd
; CHECK: %ijd0 = add i64 %jd, %ci
; CHECK: %ijd1 = shl i64 %ijd0, 1
; CHECK: %ijd = or i64 %ijd1, %part
; CHECK: %dij = getelementptr double, ptr %dst, i64 %ijd
; CHECK: %up = icmp sle i64 %ci, %j
; CHECK: %diag = icmp eq i64 %ci, %j
; CHECK: %re = icmp eq i64 %part, 0
; CHECK: %one = select i1 %re, double 1.0, double 0.0
; CHECK: %v = load double, ptr %sij
; CHECK: %o = select i1 %up, double 0.0, double %v
; CHECK: %w = select i1 %diag, double %one, double %o
; CHECK: store double %w, ptr %dij
; CHECK: %i1 = add i64 %i, 1
; CHECK: %rmore = icmp slt i64 %i1, %n2
; CHECK: br i1 %rmore, label %row, label %colnext
; CHECK: colnext:
; CHECK: %j1 = add i64 %j, 1
; CHECK: %cmore = icmp slt i64 %j1, %n
; CHECK: br i1 %cmore, label %col, label %done
; CHECK: done:
; CHECK: ret void
; CHECK-LABEL: define internal void @enzpy.rank1.f64(i64 %rows, i64 %cols, double %alpha, ptr %x, ptr %y, ptr %p, i64 %ld) {
; CHECK: store double %s, ptr %q
; CHECK-LABEL: define internal void @enzpy.unit_lower_of.f64(i64 %n, ptr %src, i64 %lds, ptr %dst, i64 %ldd) {
; CHECK: store double %w, ptr %dij
; CHECK-LABEL: define internal void @enzpy.hfold_upper.f32(i64 %n, ptr %src, i64 %lds, ptr %dst, i64 %ldd) {
; CHECK: store float %w, ptr %dij
; CHECK-LABEL: define internal void @enzpy.copy_rect.f64(i64 %rows, i64 %cols, ptr %src, i64 %lds, ptr %dst, i64 %ldd) {
; CHECK: store double %v, ptr %pd
; CHECK-LABEL: define internal void @enzpy.svd_middle.f64(i64 %n, ptr %a, ptr %b, ptr %s, ptr %d, double %dscale, ptr %out) {
; CHECK: store double %w, ptr %po
; CHECK-LABEL: define internal void @enzpy.csvd_middle.f32(i64 %n, ptr %a, ptr %b, ptr %s, ptr %d, float %dscale, float %iscale, ptr %out) {
; CHECK: entry:
; CHECK: %n2 = shl i64 %n, 1
; CHECK: %norows = icmp sle i64 %n2, 0
; CHECK: %nocols = icmp sle i64 %n, 0
; CHECK: %none = or i1 %norows, %nocols
; CHECK: br i1 %none, label %done, label %col
; CHECK: col:
; CHECK: %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
; CHECK: br label %row
; CHECK: row:
; CHECK: %i = phi i64 [ 0, %col ], [ %i1, %row ]
; CHECK: %ci = lshr i64 %i, 1
; CHECK: %part = and i64 %i, 1
; CHECK: %jn = mul i64 %j, %n
; CHECK: %k0 = add i64 %jn, %ci
; CHECK: %k1 = shl i64 %k0, 1
; CHECK: %k = or i64 %k1, %part
; CHECK: %pa = getelementptr float, ptr %a, i64 %k
; CHECK: %pb = getelementptr float, ptr %b, i64 %k
; CHECK: %po = getelementptr float, ptr %out, i64 %k
; CHECK: %psi = getelementptr float, ptr %s, i64 %ci
; CHECK: %psj = getelementptr float, ptr %s, i64 %j
; CHECK: %pdi = getelementptr float, ptr %d, i64 %ci
; CHECK: %va = load float, ptr %pa
; CHECK: %vb = load float, ptr %pb
; CHECK: %si = load float, ptr %psi
; CHECK: %sj = load float, ptr %psj
; CHECK: %di = load float, ptr %pdi
; CHECK: %as = fmul float %va, %sj
; CHECK: %sb = fmul float %si, %vb
; CHECK: %num = fadd float %as, %sb
; CHECK: %si2 = fmul float %si, %si
; CHECK: %sj2 = fmul float %sj, %sj
; CHECK: %gap = fsub float %sj2, %si2
; CHECK: %q = fdiv float %num, %gap
; CHECK: %nonum = fcmp oeq float %num, 0.0
; CHECK: %off = select i1 %nonum, float 0.0, float %q
; CHECK: %ond = fmul float %dscale, %di
; CHECK: %ia = fmul float %iscale, %va
; CHECK: %iq = fdiv float %ia, %si
; CHECK: %noia = fcmp oeq float %ia, 0.0
; CHECK: %oni = select i1 %noia, float 0.0, float %iq
; CHECK: %re = icmp eq i64 %part, 0
; CHECK: %on = select i1 %re, float %ond, float %oni
; CHECK: %diag = icmp eq i64 %ci, %j
; CHECK: %w = select i1 %diag, float %on, float %off
; CHECK: store float %w, ptr %po
; CHECK: %i1 = add i64 %i, 1
; CHECK: %rmore = icmp slt i64 %i1, %n2
; CHECK: br i1 %rmore, label %row, label %colnext
; CHECK: colnext:
; CHECK: %j1 = add i64 %j, 1
; CHECK: %cmore = icmp slt i64 %j1, %n
; CHECK: br i1 %cmore, label %col, label %done
; CHECK: done:
; CHECK: ret void
; CHECK-LABEL: define internal void @enzpy.sum_abs.f64(i64 %rows, i64 %cols, ptr %p, i64 %ld, ptr %out) {
; CHECK: entry:
; CHECK: %norows = icmp sle i64 %rows, 0
; CHECK: %nocols = icmp sle i64 %cols, 0
; CHECK: %none = or i1 %norows, %nocols
; CHECK: br i1 %none, label %done, label %col
; CHECK: col:
; CHECK: %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
; CHECK: br label %row
; CHECK: row:
; CHECK: %i = phi i64 [ 0, %col ], [ %i1, %row ]
; CHECK: %jl = mul i64 %j, %ld
; CHECK: %k = add i64 %jl, %i
; CHECK: %q = getelementptr double, ptr %p, i64 %k
; CHECK: %v = load double, ptr %q
; CHECK: %a = call double @llvm.fabs.f64(double %v)
; CHECK: %o = load double, ptr %out
; CHECK: %w = fadd double %o, %a
; CHECK: store double %w, ptr %out
; CHECK: %i1 = add i64 %i, 1
; CHECK: %rmore = icmp slt i64 %i1, %rows
; CHECK: br i1 %rmore, label %row, label %colnext
; CHECK: colnext:
; CHECK: %j1 = add i64 %j, 1
; CHECK: %cmore = icmp slt i64 %j1, %cols
; CHECK: br i1 %cmore, label %col, label %done
; CHECK: done:
; CHECK: ret void
; CHECK-LABEL: define internal void @enzpy.cupper_rect.f64(i64 %rows, i64 %cols, ptr %src, i64 %lds, ptr %dst, i64 %ldd) {
; CHECK: store double %w, ptr %pd
; CHECK-LABEL: define internal void @enzpy.crank1.f32(i64 %rows, i64 %cols, float %alpha, ptr %x, ptr %y, ptr %p, i64 %ld) {
; CHECK: store float %sr, ptr %qr
; CHECK: store float %si, ptr %qi
; DECL-DAG: declare double @llvm.fabs.f64(double)
