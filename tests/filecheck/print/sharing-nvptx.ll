; A CUDA kernel's threads (numba-cuda's IR after cleanup): the global index
; ntid.x * ctaid.x + tid.x (`cuda.grid(1)`) makes x[i] and y[i] private; a load indexed by the
; block alone (out[ctaid.x]) and one in a loop over j (pos[j]) are shared, and w[0] is uniform.
; RUN: %opt -p print --what sharing --noalias %s | %filecheck %s

define ptx_kernel void @k(ptr %x, ptr %y, ptr %w, ptr %out, ptr %pos, i64 %n) {
entry:
  %tid = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t = zext nneg i32 %tid to i64
  %ntid = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nt = zext nneg i32 %ntid to i64
  %ctaid = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %c = zext nneg i32 %ctaid to i64
  %m = mul nuw nsw i64 %nt, %c
  %i = add nuw nsw i64 %m, %t
  %inside = icmp slt i64 %i, %n
  br i1 %inside, label %body, label %exit
body:
  %px = getelementptr double, ptr %x, i64 %i
  %xi = load double, ptr %px, align 8
  %w0 = load double, ptr %w, align 8
  %po = getelementptr double, ptr %out, i64 %c
  %o = load double, ptr %po, align 8
  %v = fmul double %xi, %w0
  %v1 = fadd double %v, %o
  %py = getelementptr double, ptr %y, i64 %i
  store double %v1, ptr %py, align 8
  br label %loop
loop:
  %j = phi i64 [ 0, %body ], [ %j1, %loop ]
  %pp = getelementptr double, ptr %pos, i64 %j
  %p = load double, ptr %pp, align 8
  %j1 = add i64 %j, 1
  %more = icmp slt i64 %j1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

; CHECK-LABEL: sharing of @k
; CHECK-NEXT: private  %xi = load double, ptr %px
; CHECK-NEXT: uniform  %w0 = load double, ptr %w
; CHECK-NEXT: shared   %o = load double, ptr %po
; CHECK-NEXT: private  store double %v1, ptr %py
; CHECK-NEXT: shared   %p = load double, ptr %pp
