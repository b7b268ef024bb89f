; A float returned by value comes back with its tangent: { value, tangent }.
; A zero tangent contributes zero even where 1/(2 sqrt x) is infinite: `(t != 0 or F) ? t * p : 0`
; with F the test that the product is a number (rules/partials.py). The fmul by %c is not
; guarded: the module tests no float for NaN or infinity (rules/finite.tests_nan).
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
; CHECK-NEXT:    [[QN:%.*]] = fcmp ord double [[Q]], [[Q]]
; CHECK-NEXT:    [[QZ:%.*]] = fcmp une double %x.tangent, 0x0000000000000000
; CHECK-NEXT:    [[QK:%.*]] = or i1 [[QZ]], [[QN]]
; CHECK-NEXT:    [[DR:%.*]] = select i1 [[QK]], double [[Q]], double 0x0000000000000000
; CHECK-NEXT:    %y = fmul double %r, %c
; CHECK-NEXT:    [[DY:%.*]] = fmul double [[DR]], %c
; CHECK-NEXT:    [[A:%.*]] = insertvalue { double, double } undef, double %y, 0
; CHECK-NEXT:    [[B:%.*]] = insertvalue { double, double } [[A]], double [[DY]], 1
; CHECK-NEXT:    ret { double, double } [[B]]
