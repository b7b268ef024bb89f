; The reverse of y = x * x in a module that tests a float for NaN (code with NaN masks does): the
; store's shadow is consumed and zeroed, both fmul operands get d * x, each under the strong-zero
; guard `(d != 0 or x is finite) ? d * x : 0` (one test d != 0). Without a NaN test (fmul.ll) the
; products are not guarded (rules/partials.py).
; RUN: %opt -p reverse-mode,simplify --fn f --activity dup,dup %s | %filecheck %s

define void @f(ptr %x, ptr %y) {
entry:
  %a = load double, ptr %x, align 8
  %nan = fcmp uno double %a, 0.0
  %m = fmul double %a, %a
  %r = select i1 %nan, double 0.0, double %m
  store double %r, ptr %y, align 8
  ret void
}

; CHECK-LABEL: define void @grad(ptr %x, ptr %y, ptr %x.shadow, ptr %y.shadow)
; CHECK:         store double 0.000000e+00, ptr %y.shadow, align 8
; CHECK:         [[D:%.*]] = select i1 {{.*}}, double 0.000000e+00, double {{%.*}}
; CHECK-NEXT:    [[P1:%.*]] = fmul double [[D]], %a
; CHECK-NEXT:    [[A1:%.*]] = call double @llvm.fabs.f64(double %a)
; CHECK-NEXT:    [[F1:%.*]] = fcmp one double [[A1]], 0x7FF0000000000000
; CHECK-NEXT:    [[Z:%.*]] = fcmp une double [[D]], 0.000000e+00
; CHECK-NEXT:    [[K1:%.*]] = or i1 [[Z]], [[F1]]
; CHECK-NEXT:    [[C1:%.*]] = select i1 [[K1]], double [[P1]], double 0.000000e+00
; CHECK-NEXT:    [[P2:%.*]] = fmul double [[D]], %a
; CHECK-NEXT:    [[A2:%.*]] = call double @llvm.fabs.f64(double %a)
; CHECK-NEXT:    [[F2:%.*]] = fcmp one double [[A2]], 0x7FF0000000000000
; CHECK-NEXT:    [[K2:%.*]] = or i1 [[Z]], [[F2]]
; CHECK-NEXT:    [[C2:%.*]] = select i1 [[K2]], double [[P2]], double 0.000000e+00
; CHECK-NEXT:    [[DX:%.*]] = fadd reassoc nsz double [[C1]], [[C2]]
; CHECK-NEXT:    [[OLD:%.*]] = load double, ptr %x.shadow, align 8
; CHECK-NEXT:    [[NEW:%.*]] = fadd reassoc nsz double [[OLD]], [[DX]]
; CHECK-NEXT:    store double [[NEW]], ptr %x.shadow, align 8
