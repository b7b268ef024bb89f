; A float returned by value comes back with its tangent: { value, tangent }.
; A zero tangent contributes zero even where 1/(2 sqrt x) is infinite, and through the fmul
; by %c, which may be infinite: `(t == 0 and t * p is NaN) ? 0 : t * p` (rules/partials.py).
; RUN: %opt -p forward-mode --fn f --activity active,const %s | %filecheck %s

declare double @llvm.sqrt.f64(double)

define double @f(double %x, double %c) {
entry:
  %r = call double @llvm.sqrt.f64(double %x)
  %y = fmul double %r, %c
  ret double %y
}

; CHECK-LABEL: define { double, double } @fwd(double %x, double %c, double %x.tangent)
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %r = call double @llvm.sqrt.f64(double %x)
; CHECK-NEXT:    [[TWO_R:%.*]] = fmul double 0x4000000000000000, %r
; CHECK-NEXT:    [[Q:%.*]] = fdiv double %x.tangent, [[TWO_R]]
; CHECK-NEXT:    [[QZ:%.*]] = fcmp oeq double %x.tangent, 0x0000000000000000
; CHECK-NEXT:    [[QN:%.*]] = fcmp uno double [[Q]], [[Q]]
; CHECK-NEXT:    [[QG:%.*]] = and i1 [[QZ]], [[QN]]
; CHECK-NEXT:    [[DR:%.*]] = select i1 [[QG]], double 0x0000000000000000, double [[Q]]
; CHECK-NEXT:    %y = fmul double %r, %c
; CHECK-NEXT:    [[P:%.*]] = fmul double [[DR]], %c
; CHECK-NEXT:    [[PZ:%.*]] = fcmp oeq double [[DR]], 0x0000000000000000
; CHECK-NEXT:    [[PN:%.*]] = fcmp uno double [[P]], [[P]]
; CHECK-NEXT:    [[PG:%.*]] = and i1 [[PZ]], [[PN]]
; CHECK-NEXT:    [[DY:%.*]] = select i1 [[PG]], double 0x0000000000000000, double [[P]]
; CHECK-NEXT:    [[A:%.*]] = insertvalue { double, double } undef, double %y, 0
; CHECK-NEXT:    [[B:%.*]] = insertvalue { double, double } [[A]], double [[DY]], 1
; CHECK-NEXT:    ret { double, double } [[B]]
