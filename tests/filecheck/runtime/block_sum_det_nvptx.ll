; runtime/block_sum_det_nvptx.ll: fixed-order block sums (deterministic=True), per float type.
; RUN: %opt -p runtime --helpers enzpy.block_sum.det.nvptx.f64,enzpy.block_sum.det.nvptx.f32 %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.block_sum.det.nvptx.f64,enzpy.block_sum.det.nvptx.f32 %s | %filecheck %s --check-prefix=DECL
; RUN: %opt -p runtime --helpers enzpy.block_sum.det.nvptx.f64 %s | %filecheck %s --check-prefix=NOFLOATATOMIC

; CHECK-LABEL: define internal void @enzpy.block_sum.det.nvptx.f64(i32 %site, double %v) {
; CHECK: %buf = addrspacecast ptr addrspace(3) @enzpy.block_sum.det.buffer.f64 to ptr
; CHECK: store double %v, ptr %mine, align 8
; CHECK: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; CHECK: %ab = fadd double %a, %b
; CHECK: %total = load double, ptr %buf, align 8
; CHECK: %block = call i32 @enzpy.block_sum.det.block()
; CHECK: %slot = call ptr @enzpy.block_sum.det.slot(i32 %site, i32 %block)
; CHECK: store double %total, ptr %slot, align 8
; CHECK: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; CHECK-LABEL: define internal void @enzpy.block_sum.det.total.nvptx.f64(ptr %dst, i32 %site, i1 %last) {
; CHECK: br i1 %last, label %start, label %done
; CHECK: %j = phi i32 [ 0, %start ], [ %j.next, %loop ]
; CHECK: %x = load volatile double, ptr %slot, align 8
; CHECK: %s.next = fadd double %s, %x
; CHECK: %more = icmp ult i32 %j.next, %n
; CHECK: %new = fadd double %old, %s.next
; CHECK: store double %new, ptr %dst, align 8
; CHECK-LABEL: define internal i1 @enzpy.block_sum.det.last.nvptx() {
; CHECK: call void @llvm.nvvm.membar.gl()
; CHECK: %old = atomicrmw add ptr %scratch, i32 1 monotonic, align 4
; CHECK: %last = icmp eq i32 %old, %n.1
; CHECK: store i32 0, ptr %scratch, align 4
; CHECK: ret i1 true
; CHECK: ret i1 false
; CHECK-LABEL: define internal ptr @enzpy.block_sum.det.slot(i32 %site, i32 %block) {
; CHECK: %kn = mul i64 %k, %n.64
; CHECK: %index = add i64 %kn, %b
; CHECK: %offset = add i64 %bytes, 16
; CHECK-LABEL: define internal i32 @enzpy.block_sum.det.block() {
; CHECK-LABEL: define internal i32 @enzpy.block_sum.det.blocks() {
; CHECK-LABEL: define internal void @enzpy.block_sum.det.nvptx.f32(i32 %site, float %v) {
; CHECK: store float %total, ptr %slot, align 4
; CHECK-LABEL: define internal void @enzpy.block_sum.det.total.nvptx.f32(ptr %dst, i32 %site, i1 %last) {
; CHECK: %x = load volatile float, ptr %slot, align 4

; DECL-DAG: @enzpy.block_sum.det.scratch = internal addrspace(3) global [1 x ptr] undef, align 8
; DECL-DAG: @enzpy.block_sum.det.buffer.f64 = internal addrspace(3) global [1024 x double] undef, align 8
; DECL-DAG: @enzpy.block_sum.det.buffer.f32 = internal addrspace(3) global [1024 x float] undef, align 8

; NOFLOATATOMIC-NOT: atomicrmw fadd
