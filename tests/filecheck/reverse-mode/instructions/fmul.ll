; The reverse of y = x * x: the store's shadow is consumed and zeroed, both fmul operands get d * x.
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
; CHECK-NEXT:    [[TWO_D:%.*]] = fadd reassoc nsz double [[D]], [[D]]
; CHECK-NEXT:    [[DX:%.*]] = fmul reassoc nsz double [[TWO_D]], %a
; CHECK-NEXT:    [[OLD:%.*]] = load double, ptr %x.shadow, align 8
; CHECK-NEXT:    [[NEW:%.*]] = fadd reassoc nsz double [[OLD]], [[DX]]
; CHECK-NEXT:    store double [[NEW]], ptr %x.shadow, align 8
; CHECK-NEXT:    ret void
