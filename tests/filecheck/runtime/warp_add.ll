; runtime/warp_add.ll: Warp-aggregated atomic adds (64-bit values shuffled in halves).
; RUN: %opt -p runtime --helpers enzpy.warp_add.nvptx.f64,enzpy.warp_add.nvptx.f32 %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.warp_add.nvptx.f64,enzpy.warp_add.nvptx.f32 %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal void @enzpy.warp_add.nvptx.f64(ptr %p, double %v) alwaysinline {
; CHECK: entry:
; CHECK: %mask = call i32 @llvm.nvvm.activemask()
; CHECK: %full = icmp eq i32 %mask, -1
; CHECK: br i1 %full, label %match, label %single
; CHECK: match:
; CHECK: %addr = ptrtoint ptr %p to i64
; CHECK: %peers = call i32 @llvm.nvvm.match.any.sync.i64(i32 -1, i64 %addr)
; CHECK: %same = icmp eq i32 %peers, -1
; CHECK: br i1 %same, label %reduce, label %single
; CHECK: reduce:
; CHECK: %s0 = fadd double %v, -0.0
; CHECK: %b0 = bitcast double %s0 to i64
; CHECK: %lo0 = trunc i64 %b0 to i32
; CHECK: %hi0.w = lshr i64 %b0, 32
; CHECK: %hi0 = trunc i64 %hi0.w to i32
; CHECK: %olo0 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %lo0, i32 16, i32 31)
; CHECK: %ohi0 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %hi0, i32 16, i32 31)
; CHECK: %olo0.w = zext i32 %olo0 to i64
; CHECK: %ohi0.w = zext i32 %ohi0 to i64
; CHECK: %ohi0.s = shl i64 %ohi0.w, 32
; CHECK: %ob0 = or i64 %ohi0.s, %olo0.w
; CHECK: %o0 = bitcast i64 %ob0 to double
; CHECK: %s1 = fadd double %s0, %o0
; CHECK: %b1 = bitcast double %s1 to i64
; CHECK: %lo1 = trunc i64 %b1 to i32
; CHECK: %hi1.w = lshr i64 %b1, 32
; CHECK: %hi1 = trunc i64 %hi1.w to i32
; CHECK: %olo1 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %lo1, i32 8, i32 31)
; CHECK: %ohi1 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %hi1, i32 8, i32 31)
; CHECK: %olo1.w = zext i32 %olo1 to i64
; CHECK: %ohi1.w = zext i32 %ohi1 to i64
; CHECK: %ohi1.s = shl i64 %ohi1.w, 32
; CHECK: %ob1 = or i64 %ohi1.s, %olo1.w
; CHECK: %o1 = bitcast i64 %ob1 to double
; CHECK: %s2 = fadd double %s1, %o1
; CHECK: %b2 = bitcast double %s2 to i64
; CHECK: %lo2 = trunc i64 %b2 to i32
; CHECK: %hi2.w = lshr i64 %b2, 32
; CHECK: %hi2 = trunc i64 %hi2.w to i32
; CHECK: %olo2 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %lo2, i32 4, i32 31)
; CHECK: %ohi2 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %hi2, i32 4, i32 31)
; CHECK: %olo2.w = zext i32 %olo2 to i64
; CHECK: %ohi2.w = zext i32 %ohi2 to i64
; CHECK: %ohi2.s = shl i64 %ohi2.w, 32
; CHECK: %ob2 = or i64 %ohi2.s, %olo2.w
; CHECK: %o2 = bitcast i64 %ob2 to double
; CHECK: %s3 = fadd double %s2, %o2
; CHECK: %b3 = bitcast double %s3 to i64
; CHECK: %lo3 = trunc i64 %b3 to i32
; CHECK: %hi3.w = lshr i64 %b3, 32
; CHECK: %hi3 = trunc i64 %hi3.w to i32
; CHECK: %olo3 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %lo3, i32 2, i32 31)
; CHECK: %ohi3 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %hi3, i32 2, i32 31)
; CHECK: %olo3.w = zext i32 %olo3 to i64
; CHECK: %ohi3.w = zext i32 %ohi3 to i64
; CHECK: %ohi3.s = shl i64 %ohi3.w, 32
; CHECK: %ob3 = or i64 %ohi3.s, %olo3.w
; CHECK: %o3 = bitcast i64 %ob3 to double
; CHECK: %s4 = fadd double %s3, %o3
; CHECK: %b4 = bitcast double %s4 to i64
; CHECK: %lo4 = trunc i64 %b4 to i32
; CHECK: %hi4.w = lshr i64 %b4, 32
; CHECK: %hi4 = trunc i64 %hi4.w to i32
; CHECK: %olo4 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %lo4, i32 1, i32 31)
; CHECK: %ohi4 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %hi4, i32 1, i32 31)
; CHECK: %olo4.w = zext i32 %olo4 to i64
; CHECK: %ohi4.w = zext i32 %ohi4 to i64
; CHECK: %ohi4.s = shl i64 %ohi4.w, 32
; CHECK: %ob4 = or i64 %ohi4.s, %olo4.w
; CHECK: %o4 = bitcast i64 %ob4 to double
; CHECK: %s5 = fadd double %s4, %o4
; CHECK: %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
; CHECK: %first = icmp eq i32 %lane, 0
; CHECK: br i1 %first, label %one, label %done
; CHECK: one:
; CHECK: %old.all = atomicrmw fadd ptr %p, double %s5 monotonic, align 8
; CHECK: br label %done
; CHECK: single:
; CHECK: %old.own = atomicrmw fadd ptr %p, double %v monotonic, align 8
; CHECK: br label %done
; CHECK: done:
; CHECK: ret void
; CHECK-LABEL: define internal void @enzpy.warp_add.nvptx.f32(ptr %p, float %v) alwaysinline {
; CHECK: %mask = call i32 @llvm.nvvm.activemask()
; CHECK: %peers = call i32 @llvm.nvvm.match.any.sync.i64(i32 -1, i64 %addr)
; CHECK: %ob0 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %b0, i32 16, i32 31)
; CHECK: %ob1 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %b1, i32 8, i32 31)
; CHECK: %ob2 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %b2, i32 4, i32 31)
; CHECK: %ob3 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %b3, i32 2, i32 31)
; CHECK: %ob4 = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %b4, i32 1, i32 31)
; CHECK: %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
; DECL-DAG: declare i32 @llvm.nvvm.activemask()
; DECL-DAG: declare i32 @llvm.nvvm.match.any.sync.i64(i32, i64)
; DECL-DAG: declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)
; DECL-DAG: declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
