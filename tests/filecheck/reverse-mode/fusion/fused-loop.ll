; A loop whose iterations are independent is fused (ir_passes/transforms/reverse/loops/fusion.py): the forward
; latch jumps into the reverse of its iteration, whose end takes the latch's branch; the reverse
; sweep passes over the loop. One carrying a value through memory (y[i] reads y[i-1]) is not.
; RUN: %opt -p reverse-mode --fn f --activity dup,dup,const --noalias %s | %filecheck %s
; RUN: %opt -p reverse-mode --fn g --activity dup,const --noalias %s | %filecheck %s --check-prefix=CARRIED

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %m = fmul double %a, %a
  %py = getelementptr double, ptr %y, i64 %i
  store double %m, ptr %py, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

define void @g(ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 1, %entry ], [ %i1, %loop ]
  %k = add i64 %i, -1
  %pk = getelementptr double, ptr %y, i64 %k
  %a = load double, ptr %pk, align 8
  %py = getelementptr double, ptr %y, i64 %i
  %b = load double, ptr %py, align 8
  %m = fmul double %a, %b
  store double %m, ptr %py, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

; CHECK-LABEL: define void @grad
; CHECK: fwd.loop:
; CHECK: store double %m, ptr %py
; CHECK-NEXT: %i1 = add i64 %i, 1
; CHECK-NEXT: %more = icmp slt i64 %i1, %n
; CHECK-NEXT: br label %rev.loop
; CHECK: rev.loop:
; CHECK: store double 0x0000000000000000, ptr
; CHECK: fmul double %{{.*}}, %a
; CHECK: br label %resume.loop
; CHECK: resume.loop:
; CHECK-NEXT: br i1 %more, label %edge.loop.loop, label %edge.loop.exit
; The reverse of the exit edge goes on as the reverse of the entry edge, to the entry block.
; CHECK: rev.edge.exit.loop:
; CHECK-NEXT: br label %rev.edge.loop.entry
; CHECK: rev.edge.loop.entry:
; CHECK-NOT: rev.loop
; CHECK: br label %rev.entry
; CHECK-NOT: realloc

; CARRIED-LABEL: define void @grad
; CARRIED-NOT: resume.
; CARRIED: ret void
