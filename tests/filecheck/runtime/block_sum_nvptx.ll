; runtime/block_sum_nvptx.ll: The block sum of a CUDA block, per float type.
; RUN: %opt -p runtime --helpers enzpy.block_sum.nvptx.f64,enzpy.block_sum.nvptx.f32 %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.block_sum.nvptx.f64,enzpy.block_sum.nvptx.f32 %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal void @enzpy.block_sum.nvptx.f64(ptr %dst, double %v) {
; CHECK: %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; CHECK: %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
; CHECK: %tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
; CHECK: %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
; CHECK: %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
; CHECK: %nz = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
; CHECK: %buf = addrspacecast ptr addrspace(3) @enzpy.block_sum.buffer.f64 to ptr
; CHECK: %mine = getelementptr double, ptr %buf, i32 %t
; CHECK: store double %v, ptr %mine, align 8
; CHECK: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; CHECK: %a = load double, ptr %mine, align 8
; CHECK: %other = getelementptr double, ptr %buf, i32 %j
; CHECK: %b = load double, ptr %other, align 8
; CHECK: %ab = fadd double %a, %b
; CHECK: store double %ab, ptr %mine, align 8
; CHECK: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; CHECK: %total = load double, ptr %buf, align 8
; CHECK: %old = atomicrmw fadd ptr %dst, double %total monotonic, align 8
; CHECK: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; CHECK-LABEL: define internal void @enzpy.block_sum.nvptx.f32(ptr %dst, float %v) {
; CHECK: %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; CHECK: %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
; CHECK: %tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
; CHECK: %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
; CHECK: %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
; CHECK: %nz = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
; CHECK: %buf = addrspacecast ptr addrspace(3) @enzpy.block_sum.buffer.f32 to ptr
; CHECK: %mine = getelementptr float, ptr %buf, i32 %t
; CHECK: store float %v, ptr %mine, align 4
; CHECK: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; CHECK: %a = load float, ptr %mine, align 4
; CHECK: %other = getelementptr float, ptr %buf, i32 %j
; CHECK: %b = load float, ptr %other, align 4
; CHECK: %ab = fadd float %a, %b
; CHECK: store float %ab, ptr %mine, align 4
; CHECK: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; CHECK: %total = load float, ptr %buf, align 4
; CHECK: %old = atomicrmw fadd ptr %dst, float %total monotonic, align 4
; CHECK: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)

; DECL-DAG: @enzpy.block_sum.buffer.f64 = internal addrspace(3) global [1024 x double] undef, align 8
; DECL-DAG: @enzpy.block_sum.buffer.f32 = internal addrspace(3) global [1024 x float] undef, align 8
