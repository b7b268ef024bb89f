; A parallel loop body (a prange gufunc's loop), indexed by %i: which accesses stay in the
; iteration's own slots? y[i] and the pair x[2i], x[2i+1] do; w[0] is the same in every iteration;
; x[idx[i]] and z[j] (j a loop phi that is not the index) may meet other iterations'.
; RUN: %opt -p print --what sharing --noalias --index i %s | %filecheck %s

define void @body(ptr %x, ptr %y, ptr %w, ptr %idx, ptr %z, i64 %lo, i64 %hi) {
entry:
  br label %loop
loop:
  %i = phi i64 [ %lo, %entry ], [ %i1, %loop.end ]
  %two = shl i64 %i, 1
  %px0 = getelementptr double, ptr %x, i64 %two
  %x0 = load double, ptr %px0, align 8
  %px1 = getelementptr i8, ptr %px0, i64 8
  %x1 = load double, ptr %px1, align 8
  %w0 = load double, ptr %w, align 8
  %pk = getelementptr i64, ptr %idx, i64 %i
  %k = load i64, ptr %pk, align 8
  %pz = getelementptr double, ptr %z, i64 %k
  %zk = load double, ptr %pz, align 8
  %s = fadd double %x0, %x1
  %t = fmul double %s, %w0
  %u = fadd double %t, %zk
  %py = getelementptr double, ptr %y, i64 %i
  store double %u, ptr %py, align 8
  br label %inner
inner:
  %j = phi i64 [ 0, %loop ], [ %j1, %inner ]
  %pzj = getelementptr double, ptr %z, i64 %j
  %zj = load double, ptr %pzj, align 8
  %j1 = add i64 %j, 1
  %more = icmp slt i64 %j1, 4
  br i1 %more, label %inner, label %loop.end
loop.end:
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %hi
  br i1 %c, label %loop, label %exit
exit:
  ret void
}

; CHECK-LABEL: sharing of @body
; CHECK-NEXT: private  %x0 = load double, ptr %px0
; CHECK-NEXT: private  %x1 = load double, ptr %px1
; CHECK-NEXT: uniform  %w0 = load double, ptr %w
; CHECK-NEXT: private  %k = load i64, ptr %pk
; CHECK-NEXT: shared   %zk = load double, ptr %pz, align 8  ; an access to this memory is not linear
; CHECK-NEXT: private  store double %u, ptr %py
; CHECK-NEXT: shared   %zj = load double, ptr %pzj
