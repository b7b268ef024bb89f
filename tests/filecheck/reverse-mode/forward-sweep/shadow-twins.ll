; The augmented forward sweep (transforms/reverse/sweeps/forward_sweep.py) runs the primal, cloned, and
; gives every pointer into shadowed memory a shadow twin computed the same way on the shadows
; (a select between two arrays, an address), and saves in the frame the value the reverse
; sweep reads (the load's).
; RUN: %opt -p reverse-mode --fn f --activity dup,dup,dup,const,const --noalias %s | %filecheck %s

define void @f(ptr %x, ptr %z, ptr %y, i64 %i, i1 %c) {
entry:
  %p = select i1 %c, ptr %x, ptr %z
  %q = getelementptr double, ptr %p, i64 %i
  %a = load double, ptr %q, align 8
  %sq = fmul double %a, %a
  store double %sq, ptr %y, align 8
  ret void
}

; CHECK-LABEL: define void @grad(
; CHECK: fwd.entry:
; CHECK-NEXT: %p = select i1 %c, ptr %x, ptr %z
; CHECK-NEXT: %p.shadow = select i1 %c, ptr %x.shadow, ptr %z.shadow
; CHECK-NEXT: %q = getelementptr double, ptr %p, i64 %i
; CHECK-NEXT: %q.shadow = getelementptr double, ptr %p.shadow, i64 %i
; CHECK-NEXT: %a = load double, ptr %q, align 8
; CHECK-NEXT: store double %a, ptr %frame
; CHECK-NEXT: %sq = fmul double %a, %a
; CHECK-NEXT: store double %sq, ptr %y, align 8
; CHECK-NEXT: br label %rev.entry
