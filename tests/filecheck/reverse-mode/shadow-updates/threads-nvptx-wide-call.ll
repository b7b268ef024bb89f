; With float64 sums (`--wide 0`) a call that is not inlined would hand the callee's gradient a
; float64 shadow it reads as float32: refused, naming the call.
; RUN: not %opt -p reverse-mode --threads nvptx --wide 0 --fn k --activity dup,const %s 2>&1 | %filecheck %s

define void @k(ptr %x, i64 %n) {
entry:
  %tid = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext nneg i32 %tid to i64
  %p = getelementptr float, ptr %x, i64 %i
  call void @g(ptr %p)
  ret void
}

define void @g(ptr %p) noinline {
entry:
  %v = load float, ptr %p, align 4
  %w = fmul float %v, %v
  store float %w, ptr %p, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

; CHECK: UnsupportedError: a call that is not inlined gets a float32 array whose adjoints are summed in float64
; CHECK: LLVM instruction: call void @g(ptr %p)
