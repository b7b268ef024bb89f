; DuplicatedNoNeed (common/noneed.py): y = x*x + sin(x) into a y whose final contents the caller
; does not need: the forward sweep skips the store (LLVM then drops the sin); the reverse still
; reads and consumes y's shadow. In @g the kernel reads y back, so its store stays.
; RUN: %opt -p reverse-mode --activity dup,dup,const --noalias --no-need 1 %s | %filecheck %s
; RUN: %opt -p reverse-mode --activity dup,dup,const --noalias %s | %filecheck %s --check-prefix=NEEDED
; RUN: %opt -p reverse-mode --fn g --activity dup,dup,const --noalias --no-need 1 %s | %filecheck %s --check-prefix=READ
; RUN: not %opt -p reverse-mode --activity dup,dup,const --no-need 2 %s 2>&1 | %filecheck %s --check-prefix=CONST

define void @f(ptr noalias %x, ptr noalias %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %s = call double @llvm.sin.f64(double %a)
  %m = fmul double %a, %a
  %v = fadd double %m, %s
  %py = getelementptr double, ptr %y, i64 %i
  store double %v, ptr %py, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

define void @g(ptr noalias %x, ptr noalias %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %py = getelementptr double, ptr %y, i64 %i
  %old = load double, ptr %py, align 8
  %v = fmul double %a, %old
  store double %v, ptr %py, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

declare double @llvm.sin.f64(double)

; CHECK-LABEL: define void @grad
; CHECK: fwd.loop:
; CHECK: %v = fadd double %m, %s
; CHECK-NOT: store double %v
; CHECK: rev.loop:
; CHECK: %t.1 = getelementptr double, ptr %y.shadow, i64 %i
; CHECK-NEXT: %t.2 = load double, ptr %t.1
; CHECK-NEXT: store double 0x0000000000000000, ptr %t.1
; CHECK: ret void

; NEEDED-LABEL: define void @grad
; NEEDED: fwd.loop:
; NEEDED: store double %v, ptr %py, align 8
; NEEDED: rev.loop:

; READ-LABEL: define void @grad
; READ: store double %v, ptr %py, align 8

; CONST: no_need names parameters that are not 'dup'
