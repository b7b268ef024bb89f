; Integers and values that cannot reach the output are inactive.
; RUN: %opt -p print --what activity --activity dup,dup %s | %filecheck %s

define void @f(ptr %x, ptr %y) {
entry:
  %a = load double, ptr %x, align 8
  %dead = fmul double %a, 3.0
  %k = fptosi double %a to i64
  %m = fmul double %a, %a
  store double %m, ptr %y, align 8
  ret void
}

; CHECK: %a: active
; CHECK: %dead: const
; CHECK: %k: const
; CHECK: %m: active
