; Width 3: three shadows per dup pointer, three tangents per value, one primal.
; RUN: %opt -p forward-mode --fn f --activity dup,dup --width 3 %s | %filecheck %s

define void @f(ptr %x, ptr %y) {
entry:
  %a = load double, ptr %x, align 8
  %e = call double @llvm.exp.f64(double %a)
  store double %e, ptr %y, align 8
  ret void
}

declare double @llvm.exp.f64(double)

; CHECK-LABEL: define void @fwd(ptr %x, ptr %y, ptr %x.shadow0, ptr %x.shadow1, ptr %x.shadow2, ptr %y.shadow0, ptr %y.shadow1, ptr %y.shadow2)
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %a = load double, ptr %x, align 8
; CHECK-NEXT:    %a.t0 = load double, ptr %x.shadow0, align 8
; CHECK-NEXT:    %a.t1 = load double, ptr %x.shadow1, align 8
; CHECK-NEXT:    %a.t2 = load double, ptr %x.shadow2, align 8
; CHECK-NEXT:    %e = call double @llvm.exp.f64(double %a)
; CHECK-NOT:     call double @llvm.exp.f64
; CHECK:         [[D0:%.*]] = fmul double %a.t0, %e
; CHECK:         [[D1:%.*]] = fmul double %a.t1, %e
; CHECK:         [[D2:%.*]] = fmul double %a.t2, %e
; CHECK:         store double %e, ptr %y, align 8
; CHECK-NEXT:    store double {{%.*}}, ptr %y.shadow0, align 8
; CHECK-NEXT:    store double {{%.*}}, ptr %y.shadow1, align 8
; CHECK-NEXT:    store double {{%.*}}, ptr %y.shadow2, align 8
; CHECK-NEXT:    ret void
