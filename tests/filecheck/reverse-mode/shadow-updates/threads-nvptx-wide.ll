; threads-nvptx.ll in float32 with float64 sums (`--wide 0,2,3`: x, w and y have float64 shadows,
; Threads.wide). Every float32 adjoint is summed in a double register (%d.*, %priv.w) and rounded
; to float only where a rule multiplies it with float data; a shadow address is the float32 one
; moved by its own offset from the shadow's start (element k at byte 8k); y's shadow is read and
; zeroed as a double, x's get float64 atomic adds, w's block sum is float64.
; RUN: %opt -p reverse-mode --threads nvptx --wide 0,2,3 --noalias --fn k --activity dup,const,dup,dup,const %s | %filecheck %s

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
  %pxk = getelementptr float, ptr %x, i64 %k
  %xk = load float, ptr %pxk, align 4
  %s = tail call float @__nv_sinf(float %xk)
  %w0 = load float, ptr %w, align 4
  %ws = fmul float %w0, %s
  %px = getelementptr float, ptr %x, i64 %i
  %xi = load float, ptr %px, align 4
  %v = fadd float %ws, %xi
  %py = getelementptr float, ptr %y, i64 %i
  store float %v, ptr %py, align 4
  br label %exit
exit:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @__nv_sinf(float)

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @__nv_sinf(float)

; CHECK-LABEL: define void @grad(
; CHECK: %d.v = alloca double
; CHECK: %priv.w = alloca double
; CHECK: rev.body:
; CHECK: %[[Y:.*]] = getelementptr float, ptr %y.shadow
; CHECK-NEXT: %[[YA:.*]] = ptrtoint ptr %[[Y]] to i64
; CHECK-NEXT: %[[YB:.*]] = ptrtoint ptr %y.shadow to i64
; CHECK-NEXT: %[[YO:.*]] = sub i64 %[[YA]], %[[YB]]
; CHECK-NEXT: %[[Y8:.*]] = getelementptr i8, ptr %[[Y]], i64 %[[YO]]
; CHECK-NEXT: load double, ptr %[[Y8]], align 8
; CHECK-NEXT: store double 0x0000000000000000, ptr %[[Y8]], align 8
; CHECK: %[[XI:.*]] = getelementptr float, ptr %x.shadow
; CHECK: %[[XI8:.*]] = getelementptr i8, ptr %[[XI]], i64
; CHECK-NEXT: atomicrmw fadd ptr %[[XI8]], double {{.*}} monotonic, align 8
; CHECK: store double {{.*}}, ptr %d.s
; CHECK-NEXT: %[[DW:.*]] = load double, ptr %d.w0
; CHECK-NEXT: store double 0x0000000000000000, ptr %d.w0
; CHECK-NOT: getelementptr i8, ptr %w.shadow
; CHECK: fadd reassoc nsz double {{.*}}, %[[DW]]
; CHECK-NEXT: store double {{.*}}, ptr %priv.w
; CHECK: %[[DS:.*]] = fptrunc double {{.*}} to float
; CHECK: call float @__nv_cosf(
; CHECK: fmul float %[[DS]]
; CHECK: fpext float {{.*}} to double
; CHECK: %[[XK:.*]] = getelementptr float, ptr %x.shadow
; CHECK: %[[XK8:.*]] = getelementptr i8, ptr %[[XK]], i64
; CHECK-NEXT: atomicrmw fadd ptr %[[XK8]], double {{.*}} monotonic, align 8
; CHECK: finish:
; CHECK: %[[W8:.*]] = getelementptr i8, ptr %w.shadow, i64
; CHECK-NEXT: %[[W:.*]] = load double, ptr %priv.w
; CHECK-NEXT: call void @enzpy.block_sum.nvptx.f64(ptr %[[W8]], double %[[W]])
