; The reverse sweep walks the primal's blocks backwards (transforms/reverse/sweeps/reverse_sweep.py): an
; if/else is reversed edge by edge, each arm's reverse reached from the join's reverse by the
; branch the forward sweep took (the phi's adjoint goes to the arm's value on that edge), both
; arms' reverses then joining in the entry's.
; RUN: %opt -p reverse-mode --fn f --activity dup,dup,const %s | %filecheck %s

define void @f(ptr %x, ptr %y, i1 %c) {
entry:
  %a = load double, ptr %x, align 8
  br i1 %c, label %then, label %else
then:
  %s = fmul double %a, %a
  br label %join
else:
  %t = fmul double %a, 3.0
  br label %join
join:
  %r = phi double [ %s, %then ], [ %t, %else ]
  store double %r, ptr %y, align 8
  ret void
}

; CHECK-LABEL: define void @grad(
; CHECK: fwd.join:
; CHECK: store double %r, ptr %y, align 8
; CHECK-NEXT: br label %rev.join
; CHECK: rev.else:
; CHECK: br label %rev.edge.else.entry
; CHECK: rev.then:
; CHECK: br label %rev.edge.then.entry
; CHECK: rev.join:
; CHECK: br i1 %c, label %rev.edge.join.then, label %rev.edge.join.else
; CHECK: rev.edge.else.entry:
; CHECK-NEXT: br label %rev.entry
; CHECK: rev.edge.then.entry:
; CHECK-NEXT: br label %rev.entry
; CHECK: rev.edge.join.then:
; CHECK-NEXT: [[DR:%t\.[0-9]+]] = load double, ptr %d.r
; CHECK-NEXT: store double 0x0000000000000000, ptr %d.r
; CHECK-NEXT: [[DS:%t\.[0-9]+]] = load double, ptr %d.s
; CHECK-NEXT: [[SUM:%t\.[0-9]+]] = fadd reassoc nsz double [[DS]], [[DR]]
; CHECK-NEXT: store double [[SUM]], ptr %d.s
; CHECK: br label %rev.then
; CHECK: rev.edge.join.else:
; CHECK-NEXT: [[DR2:%t\.[0-9]+]] = load double, ptr %d.r
; CHECK-NEXT: store double 0x0000000000000000, ptr %d.r
; CHECK-NEXT: [[DT:%t\.[0-9]+]] = load double, ptr %d.t
; CHECK-NEXT: [[SUM2:%t\.[0-9]+]] = fadd reassoc nsz double [[DT]], [[DR2]]
; CHECK-NEXT: store double [[SUM2]], ptr %d.t
; CHECK: br label %rev.else
