; RUN: %opt -p print --what loops %s | %filecheck %s

define void @f(i64 %n) {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i1, %outer.latch ]
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j1, %inner ]
  %j1 = add i64 %j, 1
  %c = icmp slt i64 %j1, %n
  br i1 %c, label %inner, label %outer.latch
outer.latch:
  %i1 = add i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %outer, label %exit
exit:
  ret void
}

; CHECK: loop 0 depth 1 header outer: inner outer outer.latch
; CHECK: loop 1 depth 2 header inner: inner
