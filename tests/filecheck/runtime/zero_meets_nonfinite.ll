; runtime/zero_meets_nonfinite.ll: Does a zero adjoint meet an inf or NaN primal in a product (adjoint a or b)?
; RUN: %opt -p runtime --helpers enzpy.zero_meets_nonfinite_a.f64,enzpy.zero_meets_nonfinite_b.f32 %s | %filecheck %s

; CHECK-LABEL: define internal i1 @enzpy.zero_meets_nonfinite_a.f64(i1 %ta, i1 %tb, i64 %m, i64 %n, i64 %k, ptr %a, i64 %lda, ptr %b, i64 %ldb) {
; CHECK: entry:
; CHECK: %e0 = icmp sle i64 %m, 0
; CHECK: %e1 = icmp sle i64 %n, 0
; CHECK: %e2 = icmp sle i64 %k, 0
; CHECK: %e01 = or i1 %e0, %e1
; CHECK: %e = or i1 %e01, %e2
; CHECK: br i1 %e, label %no, label %slice
; CHECK: slice:
; CHECK: %l = phi i64 [ 0, %entry ], [ %l1, %next ]
; CHECK: %llda = mul i64 %l, %lda
; CHECK: %astart = select i1 %ta, i64 %l, i64 %llda
; CHECK: %astride = select i1 %ta, i64 %lda, i64 1
; CHECK: %lldb = mul i64 %l, %ldb
; CHECK: %bstart = select i1 %tb, i64 %lldb, i64 %l
; CHECK: %bstride = select i1 %tb, i64 1, i64 %ldb
; CHECK: br label %zeros
; CHECK: zeros:
; CHECK: %zi = phi i64 [ 0, %slice ], [ %zi1, %zeros ]
; CHECK: %zc = phi i64 [ 0, %slice ], [ %zc1, %zeros ]
; CHECK: %zo0 = mul i64 %zi, %astride
; CHECK: %zo = add i64 %astart, %zo0
; CHECK: %zq = getelementptr double, ptr %a, i64 %zo
; CHECK: %zv = load double, ptr %zq
; CHECK: %isz = fcmp oeq double %zv, 0.0
; CHECK: %zx = zext i1 %isz to i64
; CHECK: %zc1 = add i64 %zc, %zx
; CHECK: %zi1 = add i64 %zi, 1
; CHECK: %zmore = icmp slt i64 %zi1, %m
; CHECK: br i1 %zmore, label %zeros, label %counted
; CHECK: counted:
; CHECK: %anyz = icmp ne i64 %zc1, 0
; CHECK: br i1 %anyz, label %finite, label %next
; CHECK: finite:
; CHECK: %fi = phi i64 [ 0, %counted ], [ %fi1, %finite ]
; CHECK: %fs = phi double [ 0.0, %counted ], [ %fs1, %finite ]
; CHECK: %fo0 = mul i64 %fi, %bstride
; CHECK: %fo = add i64 %bstart, %fo0
; CHECK: %fq = getelementptr double, ptr %b, i64 %fo
; CHECK: %fv = load double, ptr %fq
; CHECK: %fz = fmul double %fv, 0.0
; CHECK: %fs1 = fadd reassoc double %fs, %fz
; CHECK: %fi1 = add i64 %fi, 1
; CHECK: %fmore = icmp slt i64 %fi1, %n
; CHECK: br i1 %fmore, label %finite, label %tested
; CHECK: tested:
; CHECK: %bad = fcmp uno double %fs1, 0.0
; CHECK: br i1 %bad, label %yes, label %next
; CHECK: next:
; CHECK: %l1 = add i64 %l, 1
; CHECK: %lmore = icmp slt i64 %l1, %k
; CHECK: br i1 %lmore, label %slice, label %no
; CHECK: yes:
; CHECK: ret i1 true
; CHECK: no:
; CHECK: ret i1 false
; CHECK-LABEL: define internal i1 @enzpy.zero_meets_nonfinite_b.f32(i1 %ta, i1 %tb, i64 %m, i64 %n, i64 %k, ptr %a, i64 %lda, ptr %b, i64 %ldb) {
; CHECK: entry:
; CHECK: %e0 = icmp sle i64 %m, 0
; CHECK: %e1 = icmp sle i64 %n, 0
; CHECK: %e2 = icmp sle i64 %k, 0
; CHECK: %e01 = or i1 %e0, %e1
; CHECK: %e = or i1 %e01, %e2
; CHECK: br i1 %e, label %no, label %slice
; CHECK: slice:
; CHECK: %l = phi i64 [ 0, %entry ], [ %l1, %next ]
; CHECK: %llda = mul i64 %l, %lda
; CHECK: %astart = select i1 %ta, i64 %l, i64 %llda
; CHECK: %astride = select i1 %ta, i64 %lda, i64 1
; CHECK: %lldb = mul i64 %l, %ldb
; CHECK: %bstart = select i1 %tb, i64 %lldb, i64 %l
; CHECK: %bstride = select i1 %tb, i64 1, i64 %ldb
; CHECK: br label %zeros
; CHECK: zeros:
; CHECK: %zi = phi i64 [ 0, %slice ], [ %zi1, %zeros ]
; CHECK: %zc = phi i64 [ 0, %slice ], [ %zc1, %zeros ]
; CHECK: %zo0 = mul i64 %zi, %bstride
; CHECK: %zo = add i64 %bstart, %zo0
; CHECK: %zq = getelementptr float, ptr %b, i64 %zo
; CHECK: %zv = load float, ptr %zq
; CHECK: %isz = fcmp oeq float %zv, 0.0
; CHECK: %zx = zext i1 %isz to i64
; CHECK: %zc1 = add i64 %zc, %zx
; CHECK: %zi1 = add i64 %zi, 1
; CHECK: %zmore = icmp slt i64 %zi1, %n
; CHECK: br i1 %zmore, label %zeros, label %counted
; CHECK: counted:
; CHECK: %anyz = icmp ne i64 %zc1, 0
; CHECK: br i1 %anyz, label %finite, label %next
; CHECK: finite:
; CHECK: %fi = phi i64 [ 0, %counted ], [ %fi1, %finite ]
; CHECK: %fs = phi float [ 0.0, %counted ], [ %fs1, %finite ]
; CHECK: %fo0 = mul i64 %fi, %astride
; CHECK: %fo = add i64 %astart, %fo0
; CHECK: %fq = getelementptr float, ptr %a, i64 %fo
; CHECK: %fv = load float, ptr %fq
; CHECK: %fz = fmul float %fv, 0.0
; CHECK: %fs1 = fadd reassoc float %fs, %fz
; CHECK: %fi1 = add i64 %fi, 1
; CHECK: %fmore = icmp slt i64 %fi1, %m
; CHECK: br i1 %fmore, label %finite, label %tested
; CHECK: tested:
; CHECK: %bad = fcmp uno float %fs1, 0.0
; CHECK: br i1 %bad, label %yes, label %next
; CHECK: next:
; CHECK: %l1 = add i64 %l, 1
; CHECK: %lmore = icmp slt i64 %l1, %k
; CHECK: br i1 %lmore, label %slice, label %no
; CHECK: yes:
; CHECK: ret i1 true
; CHECK: no:
; CHECK: ret i1 false
