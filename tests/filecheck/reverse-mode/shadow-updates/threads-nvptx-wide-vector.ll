; With float64 sums (`--wide 0,1`) a float32 array read as another type (here <2 x float>) is
; refused: its shadow offsets would not scale to the float64 shadow.
; RUN: not %opt -p reverse-mode --threads nvptx --wide 0,1 --fn k --activity dup,dup %s 2>&1 | %filecheck %s

define void @k(ptr %x, ptr %y) {
entry:
  %tid = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext nneg i32 %tid to i64
  %p = getelementptr <2 x float>, ptr %x, i64 %i
  %v = load <2 x float>, ptr %p, align 8
  %w = fmul <2 x float> %v, %v
  %q = getelementptr <2 x float>, ptr %y, i64 %i
  store <2 x float> %w, ptr %q, align 8
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

; CHECK: UnsupportedError: a float32 array with float64 sums accessed as <2 x float>
