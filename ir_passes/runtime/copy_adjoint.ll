; The reverse of memcpy(dst, src, bytes) over float elements: src_shadow += dst_shadow;
; dst_shadow = 0. TYPE: the float type, WIDTH its bytes, SUFFIX its name (f64, f32).

define internal void @enzpy.copy_adjoint.{{SUFFIX}}(ptr %dst, ptr %src, i64 %bytes) {
entry:
  %n = udiv i64 %bytes, {{WIDTH}}
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %pd = getelementptr {{TYPE}}, ptr %dst, i64 %i
  %ps = getelementptr {{TYPE}}, ptr %src, i64 %i
  %d = load {{TYPE}}, ptr %pd
  %s = load {{TYPE}}, ptr %ps
  %t = fadd {{TYPE}} %s, %d
  store {{TYPE}} %t, ptr %ps
  store {{TYPE}} 0.0, ptr %pd
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
