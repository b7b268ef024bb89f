; A call to a function of the module (transforms/reverse/calls/calls.py): the callee gets a split
; gradient for the activity at the call. The forward sweep calls @g.aug.0, which returns g's
; frame (its tape: sin's argument); the frame is cached per iteration and kept in the children
; list (runtime/children.ll) until @g.rev.0 runs the callee's reverse and frees it. A callee
; that returns a differentiated float (@h) is refused: its reverse would take no adjoint for it.
; RUN: %opt -p reverse-mode --fn f --activity dup,dup,const --noalias %s | %filecheck %s
; RUN: not %opt -p reverse-mode --fn k --activity dup,dup %s 2>&1 | %filecheck %s --check-prefix=FLOAT

define internal void @g(ptr %y, ptr %x, i64 %i) {
entry:
  %p = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %p, align 8
  %s = call double @llvm.sin.f64(double %a)
  %q = getelementptr double, ptr %y, i64 %i
  store double %s, ptr %q, align 8
  ret void
}

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  call void @g(ptr %y, ptr %x, i64 %i)
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

define internal double @h(ptr %x, i64 %i) {
entry:
  %p = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %p, align 8
  ret double %a
}

define void @k(ptr %x, ptr %y) {
entry:
  %v = call double @h(ptr %x, i64 0)
  store double %v, ptr %y, align 8
  ret void
}
declare double @llvm.sin.f64(double)

; CHECK-LABEL: define void @grad(ptr %x, ptr %y, i64 %n, ptr noalias %x.shadow, ptr noalias %y.shadow)
; CHECK: call void @g.aug.0(ptr %y, ptr %x, i64 %i, ptr %y.shadow, ptr %x.shadow, ptr %frame)
; CHECK: call void @enzpy.push_child(ptr %{{.*}}, ptr @g.free.0, ptr %callee.frame)
; CHECK: call void @g.rev.0(ptr %y, ptr %x, i64 %{{.*}}, ptr %y.shadow, ptr %x.shadow, ptr %{{.*}})
; CHECK: call void @enzpy.drop_children(
; CHECK-LABEL: define internal void @g.aug.0(ptr %y, ptr %x, i64 %i, ptr %y.shadow, ptr %x.shadow, ptr %frame.out)
; CHECK: call ptr @malloc(i64 8)
; CHECK: %s = call double @llvm.sin.f64(double %a)
; CHECK-LABEL: define internal void @g.rev.0(ptr %y, ptr %x, i64 %i, ptr %y.shadow, ptr %x.shadow, ptr %frame.in)
; CHECK: call double @llvm.cos.f64(
; CHECK: call void @free(ptr %frame.in)
; CHECK-LABEL: define internal void @g.free.0(ptr %frame)

; FLOAT: a differentiated call of a module function that returns a float
; FLOAT: %v = call double @h(ptr %x, i64 0)
