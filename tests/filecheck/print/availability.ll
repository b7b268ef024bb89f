; The availability plan: how the reverse sweep gets each primal value it needs, and what the tape
; holds and why. The loop counter's phi is rebuilt from the loop counter (induction), x[i] is
; loaded again (reload: nothing may overwrite it with the noalias promise), its address is
; recomputed; the division and the sin are taped under cache=auto (reading them back costs less
; than computing them again), and so is the carried %acc.
; RUN: %opt -p print --what availability --activity dup,dup --noalias %s | %filecheck %s
; RUN: %opt -p print --what availability --activity dup,dup --noalias --cache minimal %s | %filecheck %s --check-prefix=MINIMAL

declare double @llvm.sin.f64(double)

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi double [ 1.0, %entry ], [ %acc1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %q = fdiv double %a, %acc
  %s = call double @llvm.sin.f64(double %q)
  %t = fmul double %s, %a
  %acc1 = fadd double %acc, %t
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  store double %acc1, ptr %y, align 8
  ret void
}

; CHECK: %i: induction
; CHECK-NEXT: %acc: cache
; CHECK-NEXT: %px: recompute
; CHECK-NEXT: %a: reload
; CHECK-NEXT: %q: tape
; CHECK-NEXT: %s: tape
; CHECK-NEXT: tape %s (loop 0): a division or math call: reading it back costs less than computing it again
; CHECK-NEXT: tape %q (loop 0): a division or math call: reading it back costs less than computing it again
; CHECK-NEXT: tape %acc (loop 0): it is carried from one loop iteration to the next

; cache=minimal would recompute the division, but it reads the carried %acc, which is on the
; tape: so it is taped too, and the sin with it.
; MINIMAL: %q: cache
; MINIMAL-NEXT: %s: cache
; MINIMAL-NEXT: tape %s (loop 0): `llvm.sin.f64` is not recomputed
; MINIMAL-NEXT: tape %q (loop 0): its operand `%acc` is not available in the reverse sweep
