; The reverse sweep of a CUDA kernel's body (`--threads nvptx`): y[i] = w[0] * sin(x[idx[i]]) + x[i].
; x[idx[i]] may be read by several threads: its shadow update is an atomic add, and so is x[i]'s
; (another thread's x[idx[j]] may be the same element). y[i] is the thread's own: plain. w[0] is read by every thread and never written: each thread sums into
; a register, and the block adds it once (enzpy.block_sum.nvptx). sin's derivative calls
; libdevice's cos: the NVPTX backend has no instruction for llvm.cos. Without `--noalias` the four
; arrays could be one memory, and every update would be atomic.
; RUN: %opt -p reverse-mode --threads nvptx --noalias --fn k --activity dup,const,dup,dup,const %s | %filecheck %s

define void @k(ptr %x, ptr %idx, ptr %w, ptr %y, i64 %n) {
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
  %pk = getelementptr i64, ptr %idx, i64 %i
  %k = load i64, ptr %pk, align 8
  %pxk = getelementptr double, ptr %x, i64 %k
  %xk = load double, ptr %pxk, align 8
  %s = tail call double @__nv_sin(double %xk)
  %w0 = load double, ptr %w, align 8
  %ws = fmul double %w0, %s
  %px = getelementptr double, ptr %x, i64 %i
  %xi = load double, ptr %px, align 8
  %v = fadd double %ws, %xi
  %py = getelementptr double, ptr %y, i64 %i
  store double %v, ptr %py, align 8
  br label %exit
exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare double @__nv_sin(double)

; CHECK-LABEL: define void @grad(
; CHECK: %priv.w = alloca double
; CHECK: rev.body:
; CHECK: %[[Y:.*]] = getelementptr double, ptr %y.shadow
; CHECK-NEXT: load double, ptr %[[Y]]
; CHECK-NEXT: store double 0x0000000000000000, ptr %[[Y]]
; CHECK: %[[XI:.*]] = getelementptr double, ptr %x.shadow
; CHECK-NEXT: atomicrmw fadd ptr %[[XI]], double {{.*}} monotonic
; CHECK: store double {{.*}}, ptr %priv.w
; CHECK: call double @__nv_cos(
; CHECK: %[[XK:.*]] = getelementptr double, ptr %x.shadow
; CHECK-NEXT: atomicrmw fadd ptr %[[XK]], double {{.*}} monotonic
; CHECK: finish:
; CHECK-NEXT: %[[W:.*]] = load double, ptr %priv.w
; CHECK-NEXT: call void @enzpy.block_sum.nvptx.f64(ptr %w.shadow, double %[[W]])
; CHECK: define internal void @enzpy.block_sum.nvptx.f64(ptr %dst, double %v)
; CHECK: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; CHECK: atomicrmw fadd ptr %dst
