; Warp shuffles of floats and their adjoints (warp_shuffle.py says what they compute), in pieces:
; `f64` is the float64 shuffle of MODE (two 32-bit shuffles); `adjoint` the adjoint of a down, up
; or bfly shuffle (SOURCE: this lane's source j and its test p, BACK: the lane m that read from
; this one and the test ok that m is in range, CLAMP: the clamp %crev of the shuffle SHUFFLE that
; brings m's value here; pieces `source.<mode>`, `back.<mode>`, `clamp.<mode>`); `adjoint_idx`
; that of an idx shuffle; `broadcast` that of a broadcast from lane b to the full warp (STEPS:
; five `broadcast_step`s, K the step, N = K + 1, OFF the lane offset). `live` computes %live, the
; lanes of this warp that exist, and `range` this lane's range; `shuffle_decl` declares SHUFFLE,
; `sreg_decls` the special registers. TYPE: the float type, SUFFIX its name.

; -- f64
define internal double @enzpy.shfl.sync.{{MODE}}.f64(i32 %mask, double %v, i32 %b, i32 %c) alwaysinline {
entry:
  %bits = bitcast double %v to i64
  %lo = trunc i64 %bits to i32
  %hi.w = lshr i64 %bits, 32
  %hi = trunc i64 %hi.w to i32
  %rlo = call i32 @llvm.nvvm.shfl.sync.{{MODE}}.i32(i32 %mask, i32 %lo, i32 %b, i32 %c)
  %rhi = call i32 @llvm.nvvm.shfl.sync.{{MODE}}.i32(i32 %mask, i32 %hi, i32 %b, i32 %c)
  %rlo.w = zext i32 %rlo to i64
  %rhi.w = zext i32 %rhi to i64
  %rhi.s = shl i64 %rhi.w, 32
  %r = or i64 %rhi.s, %rlo.w
  %f = bitcast i64 %r to double
  ret double %f
}
declare i32 @llvm.nvvm.shfl.sync.{{MODE}}.i32(i32, i32, i32, i32)

; -- live
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %nz = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %zy = mul i32 %tz, %ny
  %row = add i32 %zy, %ty
  %rowx = mul i32 %row, %nx
  %lin = add i32 %rowx, %tx
  %nxy = mul i32 %nx, %ny
  %count = mul i32 %nxy, %nz
  %base = and i32 %lin, -32
  %left = sub i32 %count, %base
  %full = icmp uge i32 %left, 32
  %left5 = and i32 %left, 31
  %part.s = shl i32 1, %left5
  %part = sub i32 %part.s, 1
  %live = select i1 %full, i32 -1, i32 %part

; -- range
{{LIVE}}

  %mask.live = and i32 %mask, %live
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %bv = and i32 %b, 31
  %c.s = lshr i32 %c, 8
  %s = and i32 %c.s, 31
  %ns = xor i32 %s, -1
  %cv = and i32 %c, 31
  %low = and i32 %lane, %s
  %top = and i32 %cv, %ns
  %max = or i32 %low, %top
  %end.top = and i32 %ns, 31
  %end = or i32 %low, %end.top

; -- sreg_decls
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.z()

; -- source.down
  %j = add i32 %lane, %bv
  %p = icmp ule i32 %j, %max

; -- back.down
  %m = sub i32 %lane, %bv
  %ok = icmp sge i32 %m, %low

; -- clamp.down
  %crev = and i32 %c, 7936

; -- source.up
  %j = sub i32 %lane, %bv
  %p = icmp sge i32 %j, %max

; -- back.up
  %m = add i32 %lane, %bv
  %ok = icmp ule i32 %m, %end

; -- clamp.up
  %crev.s = and i32 %c, 7936
  %crev = or i32 %crev.s, 31

; -- source.bfly
  %j = xor i32 %lane, %bv
  %p = icmp ule i32 %j, %max

; -- back.bfly
  %m = xor i32 %lane, %bv
  %ok = icmp ule i32 %m, %end

; -- clamp.bfly
  %crev.s = and i32 %c, 7936
  %crev = or i32 %crev.s, 31

; -- adjoint
define internal {{TYPE}} @enzpy.shfl.adjoint.{{MODE}}.{{SUFFIX}}(i32 %mask, {{TYPE}} %d, i32 %b, i32 %c) alwaysinline {
entry:
{{RANGE}}
  {{SOURCE}}
  %send = select i1 %p, {{TYPE}} %d, {{TYPE}} 0.0
  %keep = select i1 %p, {{TYPE}} 0.0, {{TYPE}} %d
  {{BACK}}
  {{CLAMP}}
  %got = call {{TYPE}} @{{SHUFFLE}}(i32 %mask, {{TYPE}} %send, i32 %bv, i32 %crev)
  %m5 = and i32 %m, 31
  %bit.w = lshr i32 %mask.live, %m5
  %bit = trunc i32 %bit.w to i1
  %in = and i1 %ok, %bit
  %from = select i1 %in, {{TYPE}} %got, {{TYPE}} 0.0
  %r = fadd {{TYPE}} %keep, %from
  ret {{TYPE}} %r
}
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()

; -- adjoint_idx
define internal {{TYPE}} @enzpy.shfl.adjoint.idx.{{SUFFIX}}(i32 %mask, {{TYPE}} %d, i32 %b, i32 %c) alwaysinline {
entry:
{{RANGE}}
  %notb = and i32 %bv, %ns
  %j = or i32 %low, %notb
  %p = icmp ule i32 %j, %max
  %send = select i1 %p, {{TYPE}} %d, {{TYPE}} 0.0
  %keep = select i1 %p, {{TYPE}} 0.0, {{TYPE}} %d
  %target = select i1 %p, i32 %j, i32 -1
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %next ]
  %acc = phi {{TYPE}} [ %keep, %entry ], [ %acc2, %next ]
  %bit.w = lshr i32 %mask.live, %k
  %bit = trunc i32 %bit.w to i1
  br i1 %bit, label %share, label %next
share:
  %got = call {{TYPE}} @{{SHUFFLE}}(i32 %mask, {{TYPE}} %send, i32 %k, i32 31)
  %to = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 %mask, i32 %target, i32 %k, i32 31)
  %mine = icmp eq i32 %to, %lane
  %add = select i1 %mine, {{TYPE}} %got, {{TYPE}} 0.0
  %acc1 = fadd {{TYPE}} %acc, %add
  br label %next
next:
  %acc2 = phi {{TYPE}} [ %acc, %loop ], [ %acc1, %share ]
  %k1 = add i32 %k, 1
  %more = icmp ult i32 %k1, 32
  br i1 %more, label %loop, label %done
done:
  ret {{TYPE}} %acc2
}
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)

; -- broadcast
define internal {{TYPE}} @enzpy.shfl.adjoint.bcast.{{SUFFIX}}({{TYPE}} %d, i32 %b) alwaysinline {
entry:
{{LIVE}}
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %s0 = fadd {{TYPE}} %d, -0.0
{{STEPS}}
  %bv = and i32 %b, 31
  %mine = icmp eq i32 %lane, %bv
  %r = select i1 %mine, {{TYPE}} %s5, {{TYPE}} 0.0
  ret {{TYPE}} %r
}
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare {{TYPE}} @{{SHUFFLE}}(i32, {{TYPE}}, i32, i32)

; -- broadcast_step
  %o{{K}} = call {{TYPE}} @{{SHUFFLE}}(i32 -1, {{TYPE}} %s{{K}}, i32 {{OFF}}, i32 31)
  %p{{K}} = xor i32 %lane, {{OFF}}
  %q{{K}}.w = lshr i32 %live, %p{{K}}
  %q{{K}} = trunc i32 %q{{K}}.w to i1
  %g{{K}} = select i1 %q{{K}}, {{TYPE}} %o{{K}}, {{TYPE}} 0.0
  %s{{N}} = fadd {{TYPE}} %s{{K}}, %g{{K}}

; -- shuffle_decl
declare {{TYPE}} @{{SHUFFLE}}(i32, {{TYPE}}, i32, i32)
