; Does a zero of the adjoint operand meet an inf or NaN of the primal one in the product op(A)
; op(B) (op(A) m x k, op(B) k x n, transposed where ta, tb)? The terms are op(A)_il op(B)_lj, so
; for each l: count the zeros of the adjoint's slice l (WHICH = a: column l of op(A), b: row l of
; op(B)), and only where there is one, test the primal's slice l for inf or NaN (x * 0 is NaN
; just there; the sum of them vectorizes). A dense adjoint costs one pass over it. ADJOINT and
; PRIMAL name the operands (a, b), ADJOINT_LEN and PRIMAL_LEN their slices' lengths (m, n).

define internal i1 @enzpy.zero_meets_nonfinite_{{WHICH}}.{{SUFFIX}}(i1 %ta, i1 %tb, i64 %m, i64 %n, i64 %k, ptr %a, i64 %lda, ptr %b, i64 %ldb) {
entry:
  %e0 = icmp sle i64 %m, 0
  %e1 = icmp sle i64 %n, 0
  %e2 = icmp sle i64 %k, 0
  %e01 = or i1 %e0, %e1
  %e = or i1 %e01, %e2
  br i1 %e, label %no, label %slice
slice:
  %l = phi i64 [ 0, %entry ], [ %l1, %next ]
  %llda = mul i64 %l, %lda
  %astart = select i1 %ta, i64 %l, i64 %llda
  %astride = select i1 %ta, i64 %lda, i64 1
  %lldb = mul i64 %l, %ldb
  %bstart = select i1 %tb, i64 %lldb, i64 %l
  %bstride = select i1 %tb, i64 1, i64 %ldb
  br label %zeros
zeros:
  %zi = phi i64 [ 0, %slice ], [ %zi1, %zeros ]
  %zc = phi i64 [ 0, %slice ], [ %zc1, %zeros ]
  %zo0 = mul i64 %zi, %{{ADJOINT}}stride
  %zo = add i64 %{{ADJOINT}}start, %zo0
  %zq = getelementptr {{TYPE}}, ptr %{{ADJOINT}}, i64 %zo
  %zv = load {{TYPE}}, ptr %zq
  %isz = fcmp oeq {{TYPE}} %zv, 0.0
  %zx = zext i1 %isz to i64
  %zc1 = add i64 %zc, %zx
  %zi1 = add i64 %zi, 1
  %zmore = icmp slt i64 %zi1, %{{ADJOINT_LEN}}
  br i1 %zmore, label %zeros, label %counted
counted:
  %anyz = icmp ne i64 %zc1, 0
  br i1 %anyz, label %finite, label %next
finite:
  %fi = phi i64 [ 0, %counted ], [ %fi1, %finite ]
  %fs = phi {{TYPE}} [ 0.0, %counted ], [ %fs1, %finite ]
  %fo0 = mul i64 %fi, %{{PRIMAL}}stride
  %fo = add i64 %{{PRIMAL}}start, %fo0
  %fq = getelementptr {{TYPE}}, ptr %{{PRIMAL}}, i64 %fo
  %fv = load {{TYPE}}, ptr %fq
  %fz = fmul {{TYPE}} %fv, 0.0
  %fs1 = fadd reassoc {{TYPE}} %fs, %fz
  %fi1 = add i64 %fi, 1
  %fmore = icmp slt i64 %fi1, %{{PRIMAL_LEN}}
  br i1 %fmore, label %finite, label %tested
tested:
  %bad = fcmp uno {{TYPE}} %fs1, 0.0
  br i1 %bad, label %yes, label %next
next:
  %l1 = add i64 %l, 1
  %lmore = icmp slt i64 %l1, %k
  br i1 %lmore, label %slice, label %no
yes:
  ret i1 true
no:
  ret i1 false
}
