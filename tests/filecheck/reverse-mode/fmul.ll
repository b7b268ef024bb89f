; The reverse of y = x * x: the store's shadow is consumed and zeroed, both fmul operands get d * x,
; each under the strong-zero guard `(d == 0 and d * x is NaN) ? 0 : d * x` (one test d == 0).
; RUN: %opt -p reverse-mode,simplify --fn f --activity dup,dup %s | %filecheck %s

define void @f(ptr %x, ptr %y) {
entry:
  %a = load double, ptr %x, align 8
  %m = fmul double %a, %a
  store double %m, ptr %y, align 8
  ret void
}

; CHECK-LABEL: define void @grad(ptr %x, ptr %y, ptr %x.shadow, ptr %y.shadow)
; CHECK-NEXT:  alloca:
; CHECK-NEXT:    %a = load double, ptr %x, align 8
; CHECK-NEXT:    %m = fmul double %a, %a
; CHECK-NEXT:    store double %m, ptr %y, align 8
; CHECK-NEXT:    [[D:%.*]] = load double, ptr %y.shadow, align 8
; CHECK-NEXT:    store double 0.000000e+00, ptr %y.shadow, align 8
; CHECK-NEXT:    [[P1:%.*]] = fmul double [[D]], %a
; CHECK-NEXT:    [[Z:%.*]] = fcmp oeq double [[D]], 0.000000e+00
; CHECK-NEXT:    [[N1:%.*]] = fcmp uno double [[P1]], 0.000000e+00
; CHECK-NEXT:    [[G1:%.*]] = and i1 [[Z]], [[N1]]
; CHECK-NEXT:    [[C1:%.*]] = select i1 [[G1]], double 0.000000e+00, double [[P1]]
; CHECK-NEXT:    [[P2:%.*]] = fmul double [[D]], %a
; CHECK-NEXT:    [[N2:%.*]] = fcmp uno double [[P2]], 0.000000e+00
; CHECK-NEXT:    [[G2:%.*]] = and i1 [[Z]], [[N2]]
; CHECK-NEXT:    [[C2:%.*]] = select i1 [[G2]], double 0.000000e+00, double [[P2]]
; CHECK-NEXT:    [[DX:%.*]] = fadd reassoc nsz double [[C1]], [[C2]]
; CHECK-NEXT:    [[OLD:%.*]] = load double, ptr %x.shadow, align 8
; CHECK-NEXT:    [[NEW:%.*]] = fadd reassoc nsz double [[OLD]], [[DX]]
; CHECK-NEXT:    store double [[NEW]], ptr %x.shadow, align 8
; CHECK-NEXT:    ret void
