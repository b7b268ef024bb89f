; The adjoint of the 2-norm of n elements of x at stride inc (BLAS returns 0 for inc <= 0):
; with dx null the norm, else dx[i*inc] += d * x[i*inc] / norm (nothing where the norm is 0: a
; subgradient; nor where d is 0 and the norm inf or NaN: the strong zero of rules/partials.py).
; PREFIX "c": complex elements, each part a coordinate (PARTS 2 per element, else 1); part k of
; the vector sits at (k / PARTS) inc PARTS + k % PARTS. TYPE: the float type, SUFFIX its name.

define internal {{TYPE}} @enzpy.{{PREFIX}}nrm2_adjoint.{{SUFFIX}}(i64 %n, ptr %x, i64 %inc, ptr %dx, {{TYPE}} %d) {
entry:
  %parts = mul i64 %n, {{PARTS}}
  %bad = icmp sle i64 %inc, 0
  %empty = icmp sle i64 %n, 0
  %skip = or i1 %bad, %empty
  br i1 %skip, label %zero, label %sum
sum:
  %i = phi i64 [ 0, %entry ], [ %i1, %sum ]
  %acc = phi {{TYPE}} [ 0.0, %entry ], [ %acc1, %sum ]
  %ke = udiv i64 %i, {{PARTS}}
  %kp = urem i64 %i, {{PARTS}}
  %kei = mul i64 %ke, %inc
  %k0 = mul i64 %kei, {{PARTS}}
  %k = add i64 %k0, %kp
  %q = getelementptr {{TYPE}}, ptr %x, i64 %k
  %v = load {{TYPE}}, ptr %q
  %vv = fmul {{TYPE}} %v, %v
  %acc1 = fadd {{TYPE}} %acc, %vv
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %parts
  br i1 %more, label %sum, label %root
root:
  %norm = call {{TYPE}} @llvm.sqrt.{{SUFFIX}}({{TYPE}} %acc1)
  %nodx = icmp eq ptr %dx, null
  %flat = fcmp oeq {{TYPE}} %norm, 0.0
  %dzero = fcmp oeq {{TYPE}} %d, 0.0
  %huge = fcmp uge {{TYPE}} %norm, 0x7FF0000000000000
  %strong = and i1 %dzero, %huge
  %noadd0 = or i1 %nodx, %flat
  %noadd = or i1 %noadd0, %strong
  br i1 %noadd, label %out, label %add
add:
  %scale = fdiv {{TYPE}} %d, %norm
  br label %addloop
addloop:
  %j = phi i64 [ 0, %add ], [ %j1, %addloop ]
  %kje = udiv i64 %j, {{PARTS}}
  %kjp = urem i64 %j, {{PARTS}}
  %kjei = mul i64 %kje, %inc
  %kj0 = mul i64 %kjei, {{PARTS}}
  %kj = add i64 %kj0, %kjp
  %qx = getelementptr {{TYPE}}, ptr %x, i64 %kj
  %qd = getelementptr {{TYPE}}, ptr %dx, i64 %kj
  %vx = load {{TYPE}}, ptr %qx
  %vd = load {{TYPE}}, ptr %qd
  %t = fmul {{TYPE}} %scale, %vx
  %nd = fadd {{TYPE}} %vd, %t
  store {{TYPE}} %nd, ptr %qd
  %j1 = add i64 %j, 1
  %jmore = icmp slt i64 %j1, %parts
  br i1 %jmore, label %addloop, label %out
out:
  ret {{TYPE}} %norm
zero:
  ret {{TYPE}} 0.0
}

declare {{TYPE}} @llvm.sqrt.{{SUFFIX}}({{TYPE}})
