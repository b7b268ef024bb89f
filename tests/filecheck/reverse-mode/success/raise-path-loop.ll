; A raise path with a loop (a message built byte by byte) after split-returns: no success is
; reached from the loop, so the forward sweep neither counts its iterations nor reserves tape
; for it (no edge blocks), and the frame holds only the success path's square.
; RUN: %opt -p reverse-mode --fn h --activity dup,const,const --success-codes 0 %s | %filecheck %s

define i32 @h(ptr %x, ptr %msg, i64 %n) {
entry:
  %bad = icmp sgt i64 %n, 4
  br i1 %bad, label %raise, label %body
raise:
  %i = phi i64 [ 0, %entry ], [ %i1, %raise ]
  %p = getelementptr i8, ptr %msg, i64 %i
  store i8 65, ptr %p, align 1
  %i1 = add nuw i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %raise, label %raised
raised:
  br label %common.ret
body:
  %v = load double, ptr %x, align 8
  %w = fmul double %v, %v
  store double %w, ptr %x, align 8
  br label %common.ret
common.ret:
  %s = phi i32 [ 1, %raised ], [ 0, %body ]
  ret i32 %s
}
; CHECK-LABEL: define i32 @grad(
; CHECK-NEXT: alloca:
; CHECK-NEXT: %frame = alloca [16 x i8]
; CHECK-NOT: {{^}}edge.
; CHECK: fwd.raise:
; CHECK-NEXT: %i = phi i64 [ 0, %fwd.entry ], [ %i1, %fwd.raise ]
; CHECK-NOT: {{^}}edge.
; CHECK: }
