; runtime/gemm_guarded.ll: A product one term at a time under the strong zero (adjoint a or b).
; RUN: %opt -p runtime --helpers enzpy.gemm_guarded_a.f64,enzpy.gemm_guarded_b.f32 %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.gemm_guarded_a.f64,enzpy.gemm_guarded_b.f32 %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal void @enzpy.gemm_guarded_a.f64(i1 %ta, i1 %tb, i64 %m, i64 %n, i64 %k, double %alpha, ptr %a, i64 %lda, ptr %b, i64 %ldb, ptr %c, i64 %ldc) {
; CHECK: entry:
; CHECK: %e0 = icmp sle i64 %m, 0
; CHECK: %e1 = icmp sle i64 %n, 0
; CHECK: %e2 = icmp sle i64 %k, 0
; CHECK: %e01 = or i1 %e0, %e1
; CHECK: %e = or i1 %e01, %e2
; CHECK: br i1 %e, label %done, label %col
; CHECK: col:
; CHECK: %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
; CHECK: br label %row
; CHECK: row:
; CHECK: %i = phi i64 [ 0, %col ], [ %i1, %rownext ]
; CHECK: br label %inner
; CHECK: inner:
; CHECK: %l = phi i64 [ 0, %row ], [ %l1, %inner ]
; CHECK: %acc = phi double [ 0.0, %row ], [ %acc1, %inner ]
; CHECK: %ai0 = mul i64 %i, %lda
; CHECK: %ai1 = add i64 %ai0, %l
; CHECK: %al0 = mul i64 %l, %lda
; CHECK: %al1 = add i64 %al0, %i
; CHECK: %ak = select i1 %ta, i64 %ai1, i64 %al1
; CHECK: %pa = getelementptr double, ptr %a, i64 %ak
; CHECK: %va = load double, ptr %pa
; CHECK: %bl0 = mul i64 %l, %ldb
; CHECK: %bl1 = add i64 %bl0, %j
; CHECK: %bj0 = mul i64 %j, %ldb
; CHECK: %bj1 = add i64 %bj0, %l
; CHECK: %bk = select i1 %tb, i64 %bl1, i64 %bj1
; CHECK: %pb = getelementptr double, ptr %b, i64 %bk
; CHECK: %vb = load double, ptr %pb
; CHECK: %t = fmul double %va, %vb
; CHECK: %nz = fcmp une double %va, 0.0
; CHECK: %ab = call double @llvm.fabs.f64(double %vb)
; CHECK: %fin = fcmp olt double %ab, 0x7FF0000000000000
; CHECK: %keep = or i1 %nz, %fin
; CHECK: %g = select i1 %keep, double %t, double 0.0
; CHECK: %acc1 = fadd double %acc, %g
; CHECK: %l1 = add i64 %l, 1
; CHECK: %lmore = icmp slt i64 %l1, %k
; CHECK: br i1 %lmore, label %inner, label %rownext
; CHECK: rownext:
; CHECK: %ci0 = mul i64 %j, %ldc
; CHECK: %ci = add i64 %ci0, %i
; CHECK: %pc = getelementptr double, ptr %c, i64 %ci
; CHECK: %vc = load double, ptr %pc
; CHECK: %s = fmul double %alpha, %acc1
; CHECK: %vc1 = fadd double %vc, %s
; CHECK: store double %vc1, ptr %pc
; CHECK: %i1 = add i64 %i, 1
; CHECK: %rmore = icmp slt i64 %i1, %m
; CHECK: br i1 %rmore, label %row, label %colnext
; CHECK: colnext:
; CHECK: %j1 = add i64 %j, 1
; CHECK: %cmore = icmp slt i64 %j1, %n
; CHECK: br i1 %cmore, label %col, label %done
; CHECK: done:
; CHECK: ret void
; CHECK-LABEL: define internal void @enzpy.gemm_guarded_b.f32(i1 %ta, i1 %tb, i64 %m, i64 %n, i64 %k, float %alpha, ptr %a, i64 %lda, ptr %b, i64 %ldb, ptr %c, i64 %ldc) {
; CHECK: entry:
; CHECK: %e0 = icmp sle i64 %m, 0
; CHECK: %e1 = icmp sle i64 %n, 0
; CHECK: %e2 = icmp sle i64 %k, 0
; CHECK: %e01 = or i1 %e0, %e1
; CHECK: %e = or i1 %e01, %e2
; CHECK: br i1 %e, label %done, label %col
; CHECK: col:
; CHECK: %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
; CHECK: br label %row
; CHECK: row:
; CHECK: %i = phi i64 [ 0, %col ], [ %i1, %rownext ]
; CHECK: br label %inner
; CHECK: inner:
; CHECK: %l = phi i64 [ 0, %row ], [ %l1, %inner ]
; CHECK: %acc = phi float [ 0.0, %row ], [ %acc1, %inner ]
; CHECK: %ai0 = mul i64 %i, %lda
; CHECK: %ai1 = add i64 %ai0, %l
; CHECK: %al0 = mul i64 %l, %lda
; CHECK: %al1 = add i64 %al0, %i
; CHECK: %ak = select i1 %ta, i64 %ai1, i64 %al1
; CHECK: %pa = getelementptr float, ptr %a, i64 %ak
; CHECK: %va = load float, ptr %pa
; CHECK: %bl0 = mul i64 %l, %ldb
; CHECK: %bl1 = add i64 %bl0, %j
; CHECK: %bj0 = mul i64 %j, %ldb
; CHECK: %bj1 = add i64 %bj0, %l
; CHECK: %bk = select i1 %tb, i64 %bl1, i64 %bj1
; CHECK: %pb = getelementptr float, ptr %b, i64 %bk
; CHECK: %vb = load float, ptr %pb
; CHECK: %t = fmul float %va, %vb
; CHECK: %nz = fcmp une float %vb, 0.0
; CHECK: %ab = call float @llvm.fabs.f32(float %va)
; CHECK: %fin = fcmp olt float %ab, 0x7FF0000000000000
; CHECK: %keep = or i1 %nz, %fin
; CHECK: %g = select i1 %keep, float %t, float 0.0
; CHECK: %acc1 = fadd float %acc, %g
; CHECK: %l1 = add i64 %l, 1
; CHECK: %lmore = icmp slt i64 %l1, %k
; CHECK: br i1 %lmore, label %inner, label %rownext
; CHECK: rownext:
; CHECK: %ci0 = mul i64 %j, %ldc
; CHECK: %ci = add i64 %ci0, %i
; CHECK: %pc = getelementptr float, ptr %c, i64 %ci
; CHECK: %vc = load float, ptr %pc
; CHECK: %s = fmul float %alpha, %acc1
; CHECK: %vc1 = fadd float %vc, %s
; CHECK: store float %vc1, ptr %pc
; CHECK: %i1 = add i64 %i, 1
; CHECK: %rmore = icmp slt i64 %i1, %m
; CHECK: br i1 %rmore, label %row, label %colnext
; CHECK: colnext:
; CHECK: %j1 = add i64 %j, 1
; CHECK: %cmore = icmp slt i64 %j1, %n
; CHECK: br i1 %cmore, label %col, label %done
; CHECK: done:
; CHECK: ret void
; DECL-DAG: declare double @llvm.fabs.f64(double)
; DECL-DAG: declare float @llvm.fabs.f32(float)
