; The reverse of out = dot(x, y) over n elements: dx += d * y; dy += d * x (either shadow may be
; null), each product under the strong-zero guard of rules/partials.py:
; (d != 0 or y finite) ? d * y : 0. TYPE: the float type, SUFFIX its name.

define internal void @enzpy.dot_adjoint.{{SUFFIX}}(i64 %n, ptr %x, ptr %y, ptr %dx, ptr %dy, {{TYPE}} %d) {
entry:
  %empty = icmp sle i64 %n, 0
  %dnz = fcmp une {{TYPE}} %d, 0.0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %px = getelementptr {{TYPE}}, ptr %x, i64 %i
  %py = getelementptr {{TYPE}}, ptr %y, i64 %i
  %vx = load {{TYPE}}, ptr %px
  %vy = load {{TYPE}}, ptr %py
  %hasdx = icmp ne ptr %dx, null
  br i1 %hasdx, label %adx, label %checky
adx:
  %pdx = getelementptr {{TYPE}}, ptr %dx, i64 %i
  %odx = load {{TYPE}}, ptr %pdx
  %ay = call {{TYPE}} @llvm.fabs.{{SUFFIX}}({{TYPE}} %vy)
  %fy = fcmp olt {{TYPE}} %ay, 0x7FF0000000000000
  %ky = or i1 %dnz, %fy
  %py = fmul {{TYPE}} %d, %vy
  %tdx = select i1 %ky, {{TYPE}} %py, {{TYPE}} 0.0
  %ndx = fadd {{TYPE}} %odx, %tdx
  store {{TYPE}} %ndx, ptr %pdx
  br label %checky
checky:
  %hasdy = icmp ne ptr %dy, null
  br i1 %hasdy, label %ady, label %next
ady:
  %pdy = getelementptr {{TYPE}}, ptr %dy, i64 %i
  %ody = load {{TYPE}}, ptr %pdy
  %ax = call {{TYPE}} @llvm.fabs.{{SUFFIX}}({{TYPE}} %vx)
  %fx = fcmp olt {{TYPE}} %ax, 0x7FF0000000000000
  %kx = or i1 %dnz, %fx
  %qx = fmul {{TYPE}} %d, %vx
  %tdy = select i1 %kx, {{TYPE}} %qx, {{TYPE}} 0.0
  %ndy = fadd {{TYPE}} %ody, %tdy
  store {{TYPE}} %ndy, ptr %pdy
  br label %next
next:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
declare {{TYPE}} @llvm.fabs.{{SUFFIX}}({{TYPE}})
