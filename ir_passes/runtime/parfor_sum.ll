; `sum(dst, copies, ncopies, count)`: dst[0..count) += each non-null copy, in order (the
; privatised shadows of a parallel loop, transforms/reverse/parallel/parallel_private.py). TYPE: the
; float type, SUFFIX its name.

define internal void @enzpy.parfor.sum.{{SUFFIX}}(ptr %dst, ptr %copies, i64 %ncopies, i64 %count) {
entry:
  br label %outer
outer:
  %k = phi i64 [ 0, %entry ], [ %k1, %next ]
  %more = icmp slt i64 %k, %ncopies
  br i1 %more, label %take, label %done
take:
  %slot = getelementptr ptr, ptr %copies, i64 %k
  %src = load ptr, ptr %slot
  %has = icmp ne ptr %src, null
  br i1 %has, label %inner, label %next
inner:
  %i = phi i64 [ 0, %take ], [ %i1, %inner.body ]
  %in = icmp slt i64 %i, %count
  br i1 %in, label %inner.body, label %next
inner.body:
  %ps = getelementptr {{TYPE}}, ptr %src, i64 %i
  %pd = getelementptr {{TYPE}}, ptr %dst, i64 %i
  %vs = load {{TYPE}}, ptr %ps
  %vd = load {{TYPE}}, ptr %pd
  %sum = fadd {{TYPE}} %vd, %vs
  store {{TYPE}} %sum, ptr %pd
  %i1 = add i64 %i, 1
  br label %inner
next:
  %k1 = add i64 %k, 1
  br label %outer
done:
  ret void
}
