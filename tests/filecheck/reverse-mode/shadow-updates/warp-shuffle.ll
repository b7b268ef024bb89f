; The reverse of a warp shuffle (`--threads nvptx`): y[i] = v + shfl_down(v, 16), v = x[i] * x[i].
; The shuffle's operand gets the adjoint that the lanes which read from it send back
; (enzpy.shfl.adjoint.down: a shuffle up, runtime/warp_shuffle.py) plus, through the fadd, its
; own; the shuffle is not evaluated again in the reverse sweep.
; RUN: %opt -p reverse-mode --threads nvptx --noalias --fn k --activity dup,dup %s | %filecheck %s

define void @k(ptr %x, ptr %y) {
entry:
  %tid = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t = zext nneg i32 %tid to i64
  %ntid = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nt = zext nneg i32 %ntid to i64
  %ctaid = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %c = zext nneg i32 %ctaid to i64
  %m = mul nuw nsw i64 %nt, %c
  %i = add nuw nsw i64 %m, %t
  %px = getelementptr float, ptr %x, i64 %i
  %xi = load float, ptr %px, align 4
  %v = fmul float %xi, %xi
  %s = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v, i32 16, i32 31)
  %r = fadd float %v, %s
  %py = getelementptr float, ptr %y, i64 %i
  store float %r, ptr %py, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32)

; CHECK-LABEL: define void @grad(
; CHECK: call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v, i32 16, i32 31)
; CHECK-NOT: call float @llvm.nvvm.shfl.sync.down.f32
; CHECK: {{%[^ ]+}} = call float @enzpy.shfl.adjoint.down.f32(i32 -1, float {{%[^ ]+}}, i32 16, i32 31)
; CHECK-NOT: call float @llvm.nvvm.shfl.sync.down.f32
; CHECK: declare float @enzpy.shfl.adjoint.down.f32(i32, float, i32, i32)
