; An external call on active data has no rule: the error names it.
; RUN: not %opt -p reverse-mode --fn f --activity dup,dup %s 2>&1 | %filecheck %s

declare double @mystery(double)

define void @f(ptr %x, ptr %y) {
entry:
  %a = load double, ptr %x, align 8
  %m = call double @mystery(double %a)
  store double %m, ptr %y, align 8
  ret void
}

; CHECK: UnsupportedError: call to external function `mystery` has no derivative rule
; CHECK: LLVM instruction: %m = call double @mystery(double %a)
