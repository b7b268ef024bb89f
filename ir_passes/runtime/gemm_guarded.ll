; C (m x n, leading dimension ldc) += alpha op(A) op(B), op(A) m x k, op(B) k x n (transposed
; where ta, tb), one product at a time under the strong zero of rules/partials.py: the operand
; ADJOINT is an adjoint (or tangent), PRIMAL a primal value (%va, %vb), and a zero ADJOINT times an
; inf or NaN PRIMAL contributes 0. The slow path of a BLAS record's reverse, taken only where
; zero_meets_nonfinite holds (WHICH: a or b, the adjoint operand).

define internal void @enzpy.gemm_guarded_{{WHICH}}.{{SUFFIX}}(i1 %ta, i1 %tb, i64 %m, i64 %n, i64 %k, {{TYPE}} %alpha, ptr %a, i64 %lda, ptr %b, i64 %ldb, ptr %c, i64 %ldc) {
entry:
  %e0 = icmp sle i64 %m, 0
  %e1 = icmp sle i64 %n, 0
  %e2 = icmp sle i64 %k, 0
  %e01 = or i1 %e0, %e1
  %e = or i1 %e01, %e2
  br i1 %e, label %done, label %col
col:
  %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
  br label %row
row:
  %i = phi i64 [ 0, %col ], [ %i1, %rownext ]
  br label %inner
inner:
  %l = phi i64 [ 0, %row ], [ %l1, %inner ]
  %acc = phi {{TYPE}} [ 0.0, %row ], [ %acc1, %inner ]
  %ai0 = mul i64 %i, %lda
  %ai1 = add i64 %ai0, %l
  %al0 = mul i64 %l, %lda
  %al1 = add i64 %al0, %i
  %ak = select i1 %ta, i64 %ai1, i64 %al1
  %pa = getelementptr {{TYPE}}, ptr %a, i64 %ak
  %va = load {{TYPE}}, ptr %pa
  %bl0 = mul i64 %l, %ldb
  %bl1 = add i64 %bl0, %j
  %bj0 = mul i64 %j, %ldb
  %bj1 = add i64 %bj0, %l
  %bk = select i1 %tb, i64 %bl1, i64 %bj1
  %pb = getelementptr {{TYPE}}, ptr %b, i64 %bk
  %vb = load {{TYPE}}, ptr %pb
  %t = fmul {{TYPE}} %va, %vb
  %nz = fcmp une {{TYPE}} {{ADJOINT}}, 0.0
  %ab = call {{TYPE}} @llvm.fabs.{{SUFFIX}}({{TYPE}} {{PRIMAL}})
  %fin = fcmp olt {{TYPE}} %ab, 0x7FF0000000000000
  %keep = or i1 %nz, %fin
  %g = select i1 %keep, {{TYPE}} %t, {{TYPE}} 0.0
  %acc1 = fadd {{TYPE}} %acc, %g
  %l1 = add i64 %l, 1
  %lmore = icmp slt i64 %l1, %k
  br i1 %lmore, label %inner, label %rownext
rownext:
  %ci0 = mul i64 %j, %ldc
  %ci = add i64 %ci0, %i
  %pc = getelementptr {{TYPE}}, ptr %c, i64 %ci
  %vc = load {{TYPE}}, ptr %pc
  %s = fmul {{TYPE}} %alpha, %acc1
  %vc1 = fadd {{TYPE}} %vc, %s
  store {{TYPE}} %vc1, ptr %pc
  %i1 = add i64 %i, 1
  %rmore = icmp slt i64 %i1, %m
  br i1 %rmore, label %row, label %colnext
colnext:
  %j1 = add i64 %j, 1
  %cmore = icmp slt i64 %j1, %n
  br i1 %cmore, label %col, label %done
done:
  ret void
}
declare {{TYPE}} @llvm.fabs.{{SUFFIX}}({{TYPE}})
