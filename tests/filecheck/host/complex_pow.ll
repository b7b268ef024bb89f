; enzyme_py/bridge/complex_pow.ll: enzpy.cpow calls numba_cpow through its slot, then passes each part of y through its ruled cfunc, with a and b's parts as the rule's arguments.
; RUN: %runtime %S/../../../enzyme_py/bridge/complex_pow.ll:definition NAME=enzpy.cpow CPOW=slot.cpow RE=slot.re IM=slot.im | %filecheck %s

; CHECK-LABEL: define internal void @"enzpy.cpow"(ptr %a, ptr %b, ptr %y) {
; CHECK: %fn = load ptr, ptr @"slot.cpow"
; CHECK-NEXT: call void %fn(ptr %a, ptr %b, ptr %y)
; CHECK: %a.re = load double, ptr %a
; CHECK: %b.im = load double, ptr %b.im.p
; CHECK: %y.im.p = getelementptr inbounds i8, ptr %y, i64 8
; CHECK: %y.im = load double, ptr %y.im.p
; CHECK-NEXT: %rule.re = load ptr, ptr @"slot.re"
; CHECK-NEXT: %out.re = call double %rule.re(double %a.re, double %a.im, double %b.re, double %b.im, double %y.re, double %y.im)
; CHECK-NEXT: %rule.im = load ptr, ptr @"slot.im"
; CHECK-NEXT: %out.im = call double %rule.im(double %a.re, double %a.im, double %b.re, double %b.im, double %y.re, double %y.im)
; CHECK-NEXT: store double %out.re, ptr %y
; CHECK-NEXT: store double %out.im, ptr %y.im.p
; CHECK-NEXT: ret void
