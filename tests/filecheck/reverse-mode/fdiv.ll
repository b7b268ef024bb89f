; fdiv: d/b for the numerator and -(d/b)*y for the denominator; an active scalar's derivative
; is added into its out pointer.
; RUN: %opt -p reverse-mode,simplify --fn f --activity active,dup %s | %filecheck %s

define void @f(double %b, ptr %y) {
entry:
  %q = fdiv double 1.0, %b
  store double %q, ptr %y, align 8
  ret void
}

; CHECK-LABEL: define void @grad(double %b, ptr %y, ptr %y.shadow, ptr %b.dout)
; CHECK: %q = fdiv double 1.000000e+00, %b
; CHECK: load double, ptr %y.shadow
; CHECK: fdiv double {{.*}}, %b
; CHECK: fmul double
; CHECK: load double, ptr %b.dout
; CHECK: store double {{.*}}, ptr %b.dout
