; A local alloca that receives varying data gets a zeroed shadow alloca beside it.
; RUN: %opt -p forward-mode --fn f --activity dup %s | %filecheck %s

define void @f(ptr %x) {
entry:
  %slot = alloca double, align 8
  %a = load double, ptr %x, align 8
  %t = call double @llvm.sin.f64(double %a)
  store double %t, ptr %slot, align 8
  %b = load double, ptr %slot, align 8
  store double %b, ptr %x, align 8
  ret void
}

declare double @llvm.sin.f64(double)

; CHECK-LABEL: define void @fwd(ptr %x, ptr %x.shadow)
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %slot = alloca double, align 8
; CHECK-NEXT:    %slot.shadow = alloca double, align 8
; CHECK-NEXT:    call void @llvm.memset.p0.i64(ptr %slot.shadow, i8 0, i64 8, i1 false)
; CHECK:         store double %t, ptr %slot, align 8
; CHECK-NEXT:    store double {{%.*}}, ptr %slot.shadow, align 8
; CHECK-NEXT:    %b = load double, ptr %slot, align 8
; CHECK-NEXT:    %b.t = load double, ptr %slot.shadow, align 8
