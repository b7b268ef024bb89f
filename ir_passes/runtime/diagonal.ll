; dst[i] = src[i, i] (n x n, leading dimension lds).

define internal void @enzpy.diagonal.{{SUFFIX}}(i64 %n, ptr %src, i64 %lds, ptr %dst) {
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %step = add i64 %lds, 1
  %k = mul i64 %i, %step
  %ps = getelementptr {{TYPE}}, ptr %src, i64 %k
  %v = load {{TYPE}}, ptr %ps
  %pd = getelementptr {{TYPE}}, ptr %dst, i64 %i
  store {{TYPE}} %v, ptr %pd
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
