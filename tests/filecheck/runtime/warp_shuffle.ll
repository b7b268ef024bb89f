; runtime/warp_shuffle.ll: warp shuffles of floats and their adjoints (down, idx, a broadcast's step, the float64 shuffle).
; RUN: %runtime warp_shuffle:adjoint TYPE=double SUFFIX=f64 MODE=down SHUFFLE=enzpy.shfl.sync.up.f64 RANGE=piece:range LIVE=piece:live SOURCE=piece:source.down BACK=piece:back.down CLAMP=piece:clamp.down | %filecheck %s --check-prefix=CHECK
; RUN: %runtime warp_shuffle:adjoint_idx TYPE=float SUFFIX=f32 SHUFFLE=llvm.nvvm.shfl.sync.idx.f32 RANGE=piece:range LIVE=piece:live | %filecheck %s --check-prefix=IDX
; RUN: %runtime warp_shuffle:broadcast_step K=0 N=1 OFF=16 TYPE=double SHUFFLE=enzpy.shfl.sync.bfly.f64 | %filecheck %s --check-prefix=BCAST
; RUN: %runtime warp_shuffle:f64 MODE=bfly | %filecheck %s --check-prefix=F64

; CHECK-LABEL: define internal double @enzpy.shfl.adjoint.down.f64(i32 %mask, double %d, i32 %b, i32 %c) alwaysinline {
; CHECK: entry:
; CHECK: %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; CHECK: %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
; CHECK: %tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
; CHECK: %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
; CHECK: %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
; CHECK: %nz = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
; CHECK: %zy = mul i32 %tz, %ny
; CHECK: %row = add i32 %zy, %ty
; CHECK: %rowx = mul i32 %row, %nx
; CHECK: %lin = add i32 %rowx, %tx
; CHECK: %nxy = mul i32 %nx, %ny
; CHECK: %count = mul i32 %nxy, %nz
; CHECK: %base = and i32 %lin, -32
; CHECK: %left = sub i32 %count, %base
; CHECK: %full = icmp uge i32 %left, 32
; CHECK: %left5 = and i32 %left, 31
; CHECK: %part.s = shl i32 1, %left5
; CHECK: %part = sub i32 %part.s, 1
; CHECK: %live = select i1 %full, i32 -1, i32 %part
; CHECK: %mask.live = and i32 %mask, %live
; CHECK: %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
; CHECK: %bv = and i32 %b, 31
; CHECK: %c.s = lshr i32 %c, 8
; CHECK: %s = and i32 %c.s, 31
; CHECK: %ns = xor i32 %s, -1
; CHECK: %cv = and i32 %c, 31
; CHECK: %low = and i32 %lane, %s
; CHECK: %top = and i32 %cv, %ns
; CHECK: %max = or i32 %low, %top
; CHECK: %end.top = and i32 %ns, 31
; CHECK: %end = or i32 %low, %end.top
; CHECK: %j = add i32 %lane, %bv
; CHECK: %p = icmp ule i32 %j, %max
; CHECK: %send = select i1 %p, double %d, double 0.0
; CHECK: %keep = select i1 %p, double 0.0, double %d
; CHECK: %m = sub i32 %lane, %bv
; CHECK: %ok = icmp sge i32 %m, %low
; CHECK: %crev = and i32 %c, 7936
; CHECK: %got = call double @enzpy.shfl.sync.up.f64(i32 %mask, double %send, i32 %bv, i32 %crev)
; CHECK: %m5 = and i32 %m, 31
; CHECK: %bit.w = lshr i32 %mask.live, %m5
; CHECK: %bit = trunc i32 %bit.w to i1
; CHECK: %in = and i1 %ok, %bit
; CHECK: %from = select i1 %in, double %got, double 0.0
; CHECK: %r = fadd double %keep, %from
; CHECK: ret double %r
; CHECK: }
; CHECK: declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
; IDX-LABEL: define internal float @enzpy.shfl.adjoint.idx.f32(i32 %mask, float %d, i32 %b, i32 %c) alwaysinline {
; IDX: entry:
; IDX: %send = select i1 %p, float %d, float 0.0
; IDX: %keep = select i1 %p, float 0.0, float %d
; IDX: loop:
; IDX: %acc = phi float [ %keep, %entry ], [ %acc2, %next ]
; IDX: share:
; IDX: %got = call float @llvm.nvvm.shfl.sync.idx.f32(i32 %mask, float %send, i32 %k, i32 31)
; IDX: %add = select i1 %mine, float %got, float 0.0
; IDX: %acc1 = fadd float %acc, %add
; IDX: next:
; IDX: %acc2 = phi float [ %acc, %loop ], [ %acc1, %share ]
; IDX: done:
; IDX: ret float %acc2
; BCAST: %o0 = call double @enzpy.shfl.sync.bfly.f64(i32 -1, double %s0, i32 16, i32 31)
; BCAST: %p0 = xor i32 %lane, 16
; BCAST: %q0.w = lshr i32 %live, %p0
; BCAST: %q0 = trunc i32 %q0.w to i1
; BCAST: %g0 = select i1 %q0, double %o0, double 0.0
; BCAST: %s1 = fadd double %s0, %g0
; F64-LABEL: define internal double @enzpy.shfl.sync.bfly.f64(i32 %mask, double %v, i32 %b, i32 %c) alwaysinline {
; F64: entry:
; F64: %bits = bitcast double %v to i64
; F64: %lo = trunc i64 %bits to i32
; F64: %hi.w = lshr i64 %bits, 32
; F64: %hi = trunc i64 %hi.w to i32
; F64: %rlo = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 %mask, i32 %lo, i32 %b, i32 %c)
; F64: %rhi = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 %mask, i32 %hi, i32 %b, i32 %c)
; F64: %rlo.w = zext i32 %rlo to i64
; F64: %rhi.w = zext i32 %rhi to i64
; F64: %rhi.s = shl i64 %rhi.w, 32
; F64: %r = or i64 %rhi.s, %rlo.w
; F64: %f = bitcast i64 %r to double
; F64: ret double %f
; F64: }
; F64: declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)
