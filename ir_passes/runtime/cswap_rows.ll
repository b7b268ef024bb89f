; swap_rows.ll on complex p: both parts of each element swapped.

define internal void @enzpy.cswap_rows.{{SUFFIX}}(i64 %n, i64 %cols, ptr %ipiv, ptr %p, i64 %ld, i64 %back) {
entry:
  %norows = icmp sle i64 %n, 0
  %nocols = icmp sle i64 %cols, 0
  %empty = or i1 %norows, %nocols
  br i1 %empty, label %done, label %step
step:
  %k = phi i64 [ 0, %entry ], [ %k1, %stepnext ]
  %rev = sub i64 %n, 1
  %revk = sub i64 %rev, %k
  %isback = icmp ne i64 %back, 0
  %i = select i1 %isback, i64 %revk, i64 %k
  %pp = getelementptr i32, ptr %ipiv, i64 %i
  %p32 = load i32, ptr %pp
  %p1 = sext i32 %p32 to i64
  %r = sub i64 %p1, 1
  %same = icmp eq i64 %r, %i
  br i1 %same, label %stepnext, label %col
col:
  %j = phi i64 [ 0, %step ], [ %j1, %col ]
  %jo = mul i64 %j, %ld
  %ai0 = add i64 %jo, %i
  %ar0 = add i64 %jo, %r
  %ai = shl i64 %ai0, 1
  %ar = shl i64 %ar0, 1
  %qi = getelementptr {{TYPE}}, ptr %p, i64 %ai
  %qr = getelementptr {{TYPE}}, ptr %p, i64 %ar
  %vi = load {{TYPE}}, ptr %qi
  %vr = load {{TYPE}}, ptr %qr
  store {{TYPE}} %vr, ptr %qi
  store {{TYPE}} %vi, ptr %qr
  %qii = getelementptr {{TYPE}}, ptr %qi, i64 1
  %qri = getelementptr {{TYPE}}, ptr %qr, i64 1
  %wi = load {{TYPE}}, ptr %qii
  %wr = load {{TYPE}}, ptr %qri
  store {{TYPE}} %wr, ptr %qii
  store {{TYPE}} %wi, ptr %qri
  %j1 = add i64 %j, 1
  %cmore = icmp slt i64 %j1, %cols
  br i1 %cmore, label %col, label %stepnext
stepnext:
  %k1 = add i64 %k, 1
  %more = icmp slt i64 %k1, %n
  br i1 %more, label %step, label %done
done:
  ret void
}
