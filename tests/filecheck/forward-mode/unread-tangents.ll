; A tangent the caller does not read (--unread-tangents): y's tangent store is left out, and with
; it the tangent arithmetic that only fed it (LLVM deletes it); z's stays. A Hessian-vector
; product differentiates a gradient this way, without the directional derivative of f(x).
; With y read back in the function (@g), its tangent store stays.
; RUN: %opt -p forward-mode --fn f --activity dup,dup,dup --unread-tangents 1 %s | %filecheck %s
; RUN: %opt -p forward-mode --fn g --activity dup,dup,dup --unread-tangents 1 %s | %filecheck %s --check-prefix=READ

define void @f(ptr noalias %x, ptr noalias %y, ptr noalias %z) {
entry:
  %a = load double, ptr %x, align 8
  %m = fmul double %a, %a
  store double %m, ptr %y, align 8
  %c = fmul double %m, %a
  store double %c, ptr %z, align 8
  ret void
}

define void @g(ptr noalias %x, ptr noalias %y, ptr noalias %z) {
entry:
  %a = load double, ptr %x, align 8
  %m = fmul double %a, %a
  store double %m, ptr %y, align 8
  %b = load double, ptr %y, align 8
  store double %b, ptr %z, align 8
  ret void
}

; CHECK-LABEL: define void @fwd(
; CHECK:         store double %m, ptr %y, align 8
; CHECK-NOT:     ptr %y.shadow, align
; CHECK:         store double %c, ptr %z, align 8
; CHECK-NEXT:    store double %{{.+}}, ptr %z.shadow, align 8

; READ-LABEL: define void @fwd(
; READ:         store double %m, ptr %y, align 8
; READ-NEXT:    store double %{{.+}}, ptr %y.shadow, align 8
