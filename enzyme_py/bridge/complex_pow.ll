; The definition complex_pow.py gives `enzpy.cpow` (NAME): Numba's numba_cpow(a, b, y) called
; through the global slot CPOW (inactive), then each part of y passed through the cfunc at slot
; RE or IM, which returns that part and carries its partial derivatives in a and b (the slots
; are rule_calls.ll's).

; -- definition
define internal void @"{{NAME}}"(ptr %a, ptr %b, ptr %y) {
entry:
  %fn = load ptr, ptr @"{{CPOW}}"
  call void %fn(ptr %a, ptr %b, ptr %y)
  %a.im.p = getelementptr inbounds i8, ptr %a, i64 8
  %a.re = load double, ptr %a
  %a.im = load double, ptr %a.im.p
  %b.im.p = getelementptr inbounds i8, ptr %b, i64 8
  %b.re = load double, ptr %b
  %b.im = load double, ptr %b.im.p
  %y.im.p = getelementptr inbounds i8, ptr %y, i64 8
  %y.re = load double, ptr %y
  %y.im = load double, ptr %y.im.p
  %rule.re = load ptr, ptr @"{{RE}}"
  %out.re = call double %rule.re(double %a.re, double %a.im, double %b.re, double %b.im, double %y.re, double %y.im)
  %rule.im = load ptr, ptr @"{{IM}}"
  %out.im = call double %rule.im(double %a.re, double %a.im, double %b.re, double %b.im, double %y.re, double %y.im)
  store double %out.re, ptr %y
  store double %out.im, ptr %y.im.p
  ret void
}
