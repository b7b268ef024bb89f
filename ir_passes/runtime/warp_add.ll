; Warp-aggregated atomic adds for shared shadow updates on the GPU (warp_add.py), in pieces:
; `helper` defines @NAME(ptr %p, TYPE %v), ALIGN the type's bytes; when the whole warp is
; converged and every lane adds into the same address, the lanes sum their values with five
; butterfly STEPS (K the step, N = K + 1, SPLIT the shuffle of %bK, OFF the lane offset, BITS the
; integer type of TYPE's width) and lane 0 makes the one atomic add; otherwise each lane adds its
; own value. A 64-bit value is shuffled in two 32-bit halves (`split64`), a 32-bit one at once
; (`split32`).

; -- helper
declare i32 @llvm.nvvm.activemask()
declare i32 @llvm.nvvm.match.any.sync.i64(i32, i64)
declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
define internal void @{{NAME}}(ptr %p, {{TYPE}} %v) alwaysinline {
entry:
  %mask = call i32 @llvm.nvvm.activemask()
  %full = icmp eq i32 %mask, -1
  br i1 %full, label %match, label %single
match:
  %addr = ptrtoint ptr %p to i64
  %peers = call i32 @llvm.nvvm.match.any.sync.i64(i32 -1, i64 %addr)
  %same = icmp eq i32 %peers, -1
  br i1 %same, label %reduce, label %single
reduce:
  %s0 = fadd {{TYPE}} %v, -0.0
{{STEPS}}
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %first = icmp eq i32 %lane, 0
  br i1 %first, label %one, label %done
one:
  %old.all = atomicrmw fadd ptr %p, {{TYPE}} %s5 monotonic, align {{ALIGN}}
  br label %done
single:
  %old.own = atomicrmw fadd ptr %p, {{TYPE}} %v monotonic, align {{ALIGN}}
  br label %done
done:
  ret void
}

; -- step
  %b{{K}} = bitcast {{TYPE}} %s{{K}} to {{BITS}}
{{SPLIT}}
  %o{{K}} = bitcast {{BITS}} %ob{{K}} to {{TYPE}}
  %s{{N}} = fadd {{TYPE}} %s{{K}}, %o{{K}}

; -- split64
  %lo{{K}} = trunc i64 %b{{K}} to i32
  %hi{{K}}.w = lshr i64 %b{{K}}, 32
  %hi{{K}} = trunc i64 %hi{{K}}.w to i32
  %olo{{K}} = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %lo{{K}}, i32 {{OFF}}, i32 31)
  %ohi{{K}} = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %hi{{K}}, i32 {{OFF}}, i32 31)
  %olo{{K}}.w = zext i32 %olo{{K}} to i64
  %ohi{{K}}.w = zext i32 %ohi{{K}} to i64
  %ohi{{K}}.s = shl i64 %ohi{{K}}.w, 32
  %ob{{K}} = or i64 %ohi{{K}}.s, %olo{{K}}.w

; -- split32
  %ob{{K}} = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %b{{K}}, i32 {{OFF}}, i32 31)
