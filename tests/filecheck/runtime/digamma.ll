; runtime/digamma.ll: digamma: the recurrence up to 6, then the asymptotic series.
; RUN: %opt -p runtime --helpers enzpy.digamma %s | %filecheck %s

; CHECK-LABEL: define internal double @enzpy.digamma(double %x) {
; CHECK: %lg = call double @llvm.log.f64(double %v)
