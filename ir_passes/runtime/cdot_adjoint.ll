; The reverse of out = sum x y (dotu) or sum conj(x) y (dotc, %c true) over n complex elements,
; with the adjoint d = dre + i dim: dx += d conj(y) (dotc: conj(d) y), dy += d conj(x) (dotc:
; d x); either shadow may be null; nothing when d is 0 (the strong zero, rules/partials.py).

define internal void @enzpy.cdot_adjoint.{{SUFFIX}}(i64 %n, ptr %x, ptr %y, ptr %dx, ptr %dy, {{TYPE}} %dre, {{TYPE}} %dim, i1 %c) {
entry:
  %empty = icmp sle i64 %n, 0
  %rz = fcmp oeq {{TYPE}} %dre, 0.0
  %iz = fcmp oeq {{TYPE}} %dim, 0.0
  %dz = and i1 %rz, %iz
  %skip = or i1 %empty, %dz
  %ndim = fneg {{TYPE}} %dim
  %axi = select i1 %c, {{TYPE}} %ndim, {{TYPE}} %dim
  %sgn = select i1 %c, {{TYPE}} 1.0, {{TYPE}} -1.0
  br i1 %skip, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %k = shl i64 %i, 1
  %ki = or i64 %k, 1
  %pxr = getelementptr {{TYPE}}, ptr %x, i64 %k
  %pxi = getelementptr {{TYPE}}, ptr %x, i64 %ki
  %pyr = getelementptr {{TYPE}}, ptr %y, i64 %k
  %pyi = getelementptr {{TYPE}}, ptr %y, i64 %ki
  %xr = load {{TYPE}}, ptr %pxr
  %xi0 = load {{TYPE}}, ptr %pxi
  %yr = load {{TYPE}}, ptr %pyr
  %yi0 = load {{TYPE}}, ptr %pyi
  %xi = fmul {{TYPE}} %xi0, %sgn
  %yi = fmul {{TYPE}} %yi0, %sgn
  %hasdx = icmp ne ptr %dx, null
  br i1 %hasdx, label %adx, label %checky
adx:
  %a1 = fmul {{TYPE}} %dre, %yr
  %a2 = fmul {{TYPE}} %axi, %yi
  %ar = fsub {{TYPE}} %a1, %a2
  %a3 = fmul {{TYPE}} %dre, %yi
  %a4 = fmul {{TYPE}} %axi, %yr
  %ai = fadd {{TYPE}} %a3, %a4
  %pdxr = getelementptr {{TYPE}}, ptr %dx, i64 %k
  %pdxi = getelementptr {{TYPE}}, ptr %dx, i64 %ki
  %odxr = load {{TYPE}}, ptr %pdxr
  %odxi = load {{TYPE}}, ptr %pdxi
  %ndxr = fadd {{TYPE}} %odxr, %ar
  %ndxi = fadd {{TYPE}} %odxi, %ai
  store {{TYPE}} %ndxr, ptr %pdxr
  store {{TYPE}} %ndxi, ptr %pdxi
  br label %checky
checky:
  %hasdy = icmp ne ptr %dy, null
  br i1 %hasdy, label %ady, label %next
ady:
  %b1 = fmul {{TYPE}} %dre, %xr
  %b2 = fmul {{TYPE}} %dim, %xi
  %br = fsub {{TYPE}} %b1, %b2
  %b3 = fmul {{TYPE}} %dre, %xi
  %b4 = fmul {{TYPE}} %dim, %xr
  %bi = fadd {{TYPE}} %b3, %b4
  %pdyr = getelementptr {{TYPE}}, ptr %dy, i64 %k
  %pdyi = getelementptr {{TYPE}}, ptr %dy, i64 %ki
  %odyr = load {{TYPE}}, ptr %pdyr
  %odyi = load {{TYPE}}, ptr %pdyi
  %ndyr = fadd {{TYPE}} %odyr, %br
  %ndyi = fadd {{TYPE}} %odyi, %bi
  store {{TYPE}} %ndyr, ptr %pdyr
  store {{TYPE}} %ndyi, ptr %pdyi
  br label %next
next:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
