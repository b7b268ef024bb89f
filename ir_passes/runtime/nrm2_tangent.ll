; The tangent of the 2-norm: sum x[i*inc] * dx[i*inc] / norm (0 where the norm is 0); PREFIX,
; PARTS, TYPE and SUFFIX as in nrm2_adjoint.ll.

define internal {{TYPE}} @enzpy.{{PREFIX}}nrm2_tangent.{{SUFFIX}}(i64 %n, ptr %x, i64 %inc, ptr %dx) {
entry:
  %parts = mul i64 %n, {{PARTS}}
  %bad = icmp sle i64 %inc, 0
  %empty = icmp sle i64 %n, 0
  %skip = or i1 %bad, %empty
  br i1 %skip, label %zero, label %sum
sum:
  %i = phi i64 [ 0, %entry ], [ %i1, %sum ]
  %acc = phi {{TYPE}} [ 0.0, %entry ], [ %acc1, %sum ]
  %dot = phi {{TYPE}} [ 0.0, %entry ], [ %dot1, %sum ]
  %ke = udiv i64 %i, {{PARTS}}
  %kp = urem i64 %i, {{PARTS}}
  %kei = mul i64 %ke, %inc
  %k0 = mul i64 %kei, {{PARTS}}
  %k = add i64 %k0, %kp
  %q = getelementptr {{TYPE}}, ptr %x, i64 %k
  %qd = getelementptr {{TYPE}}, ptr %dx, i64 %k
  %v = load {{TYPE}}, ptr %q
  %vd = load {{TYPE}}, ptr %qd
  %vv = fmul {{TYPE}} %v, %v
  %acc1 = fadd {{TYPE}} %acc, %vv
  %xd = fmul {{TYPE}} %v, %vd
  %dot1 = fadd {{TYPE}} %dot, %xd
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %parts
  br i1 %more, label %sum, label %root
root:
  %norm = call {{TYPE}} @llvm.sqrt.{{SUFFIX}}({{TYPE}} %acc1)
  %flat = fcmp oeq {{TYPE}} %norm, 0.0
  %t = fdiv {{TYPE}} %dot1, %norm
  %r = select i1 %flat, {{TYPE}} 0.0, {{TYPE}} %t
  ret {{TYPE}} %r
zero:
  ret {{TYPE}} 0.0
}

declare {{TYPE}} @llvm.sqrt.{{SUFFIX}}({{TYPE}})
