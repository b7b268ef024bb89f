; digamma by the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 6, then the asymptotic series.

define internal double @enzpy.digamma(double %x) {
entry:
  br label %loop
loop:
  %v = phi double [ %x, %entry ], [ %v1, %body ]
  %acc = phi double [ 0.0, %entry ], [ %acc1, %body ]
  %small = fcmp olt double %v, 6.0
  br i1 %small, label %body, label %tail
body:
  %r = fdiv double 1.0, %v
  %acc1 = fsub double %acc, %r
  %v1 = fadd double %v, 1.0
  br label %loop
tail:
  %lg = call double @llvm.log.f64(double %v)
  %inv = fdiv double 1.0, %v
  %inv2 = fmul double %inv, %inv
  %h = fmul double %inv, 0.5
  %p1 = fmul double %inv2, 0xBF95995995995996
  %p2 = fadd double %p1, 0x3F7F07C1F07C1F08
  %p3 = fmul double %p2, %inv2
  %p4 = fadd double %p3, 0xBF71111111111111
  %p5 = fmul double %p4, %inv2
  %p6 = fadd double %p5, 0x3F70410410410410
  %p7 = fmul double %p6, %inv2
  %p8 = fadd double %p7, 0xBF81111111111111
  %p9 = fmul double %p8, %inv2
  %p10 = fadd double %p9, 0x3FB5555555555555
  %ser = fmul double %p10, %inv2
  %a = fsub double %lg, %h
  %b = fsub double %a, %ser
  %res = fadd double %b, %acc
  ret double %res
}
declare double @llvm.log.f64(double)
