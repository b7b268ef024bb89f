; fdiv: d/b for the numerator and -(d/b)*y for the denominator; an active scalar's derivative
; is added into its out pointer. A reciprocal 1/b needs no division in reverse: -(d*y)*y.
; RUN: %opt -p reverse-mode,simplify --fn f --activity active,active,dup %s | %filecheck %s
; RUN: %opt -p reverse-mode,simplify --fn r --activity active,dup %s | %filecheck %s --check-prefix=RECIP

define void @f(double %a, double %b, ptr %y) {
entry:
  %q = fdiv double %a, %b
  store double %q, ptr %y, align 8
  ret void
}

define void @r(double %b, ptr %y) {
entry:
  %q = fdiv double 1.0, %b
  store double %q, ptr %y, align 8
  ret void
}

; CHECK-LABEL: define void @grad(double %a, double %b, ptr %y, ptr %y.shadow, ptr %a.dout, ptr %b.dout)
; CHECK: %q = fdiv double %a, %b
; CHECK: load double, ptr %y.shadow
; CHECK: fdiv double {{.*}}, %b
; CHECK: fmul double
; CHECK: load double, ptr %a.dout
; CHECK: store double {{.*}}, ptr %a.dout
; CHECK: store double {{.*}}, ptr %b.dout

; RECIP-LABEL: define void @grad(double %b, ptr %y, ptr %y.shadow, ptr %b.dout)
; RECIP: %q = fdiv double 1.000000e+00, %b
; RECIP: load double, ptr %y.shadow
; RECIP-NOT: fdiv
; RECIP: fmul double {{.*}}, %q
; RECIP: fneg double %q
; RECIP: fmul double
; RECIP: store double {{.*}}, ptr %b.dout
