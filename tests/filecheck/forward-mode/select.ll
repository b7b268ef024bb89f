; The tangent of a select is the select of the tangents; a shadowed pointer select selects shadows.
; RUN: %opt -p forward-mode --fn f --activity dup,dup,dup %s | %filecheck %s

define void @f(ptr %x, ptr %y, ptr %z) {
entry:
  %a = load double, ptr %x, align 8
  %pos = fcmp ogt double %a, 0.0
  %m = select i1 %pos, double %a, double 0.0
  %p = select i1 %pos, ptr %y, ptr %z
  store double %m, ptr %p, align 8
  ret void
}

; CHECK-LABEL: define void @fwd(ptr %x, ptr %y, ptr %z, ptr %x.shadow, ptr %y.shadow, ptr %z.shadow)
; CHECK:         %m = select i1 %pos, double %a, double 0.0
; CHECK-NEXT:    %m.t = select i1 %pos, double %a.t, double 0x0000000000000000
; CHECK-NEXT:    %p = select i1 %pos, ptr %y, ptr %z
; CHECK-NEXT:    %p.shadow = select i1 %pos, ptr %y.shadow, ptr %z.shadow
; CHECK-NEXT:    store double %m, ptr %p, align 8
; CHECK-NEXT:    store double %m.t, ptr %p.shadow, align 8
