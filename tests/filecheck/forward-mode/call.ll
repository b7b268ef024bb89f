; A call into the module gets a forward version of the callee for its activity; the recursive
; call inside it calls the same version.
; RUN: %opt -p forward-mode --fn f --activity dup,const %s | %filecheck %s

define double @pow_rec(double %a, i64 %n) {
entry:
  %done = icmp sle i64 %n, 0
  br i1 %done, label %base, label %rec
base:
  ret double 1.0
rec:
  %n1 = sub i64 %n, 1
  %r = call double @pow_rec(double %a, i64 %n1)
  %m = fmul double %a, %r
  ret double %m
}

define void @f(ptr %x, i64 %n) {
entry:
  %a = load double, ptr %x, align 8
  %p = call double @pow_rec(double %a, i64 %n)
  store double %p, ptr %x, align 8
  ret void
}

; CHECK-LABEL: define void @fwd(ptr %x, i64 %n, ptr %x.shadow)
; CHECK:         %p.fwd = call { double, double } @pow_rec.fwd.0(double %a, i64 %n, double %a.t)
; CHECK-NEXT:    %p = extractvalue { double, double } %p.fwd, 0
; CHECK-NEXT:    %p.t = extractvalue { double, double } %p.fwd, 1
; CHECK:         store double %p.t, ptr %x.shadow, align 8

; CHECK-LABEL: define internal { double, double } @pow_rec.fwd.0(double %a, i64 %n, double %a.tangent)
; CHECK:         %r.fwd = call { double, double } @pow_rec.fwd.0(double %a, i64 %n1, double %a.tangent)
; CHECK:         %m = fmul double %a, %r
; CHECK-NEXT:    [[T1:%.*]] = fmul double %a.tangent, %r
; CHECK-NEXT:    [[T2:%.*]] = fmul double %r.t, %a
; CHECK-NEXT:    [[DM:%.*]] = fadd double [[T1]], [[T2]]
; CHECK:         insertvalue { double, double } {{%.*}}, double [[DM]], 1
; CHECK:       base:
; CHECK:         insertvalue { double, double } {{%.*}}, double 0x0000000000000000, 1
; CHECK-NOT:   define {{.*}}pow_rec.fwd.1
