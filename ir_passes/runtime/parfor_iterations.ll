; `iterations(sched, nsched, step)`: a parallel loop's iteration count, from its schedule (per
; entry of `step` bytes, the inclusive starts then stops of each dimension).

define internal i64 @enzpy.parfor.iterations(ptr %sched, i64 %n, i64 %step) {
entry:
  %nd = udiv i64 %step, 16
  br label %outer
outer:
  %e = phi i64 [ 0, %entry ], [ %e1, %next ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %next ]
  %more = icmp slt i64 %e, %n
  br i1 %more, label %each, label %done
each:
  %off = mul i64 %e, %step
  %p = getelementptr i8, ptr %sched, i64 %off
  br label %inner
inner:
  %d = phi i64 [ 0, %each ], [ %d1, %inner.body ]
  %prod = phi i64 [ 1, %each ], [ %prod1, %inner.body ]
  %in = icmp slt i64 %d, %nd
  br i1 %in, label %inner.body, label %next
inner.body:
  %ps = getelementptr i64, ptr %p, i64 %d
  %dn = add i64 %d, %nd
  %pe = getelementptr i64, ptr %p, i64 %dn
  %start = load i64, ptr %ps
  %stop = load i64, ptr %pe
  %len0 = sub i64 %stop, %start
  %len = add i64 %len0, 1
  %pos = icmp sgt i64 %len, 0
  %lenc = select i1 %pos, i64 %len, i64 0
  %prod1 = mul i64 %prod, %lenc
  %d1 = add i64 %d, 1
  br label %inner
next:
  %acc1 = add i64 %acc, %prod
  %e1 = add i64 %e, 1
  br label %outer
done:
  ret i64 %acc
}
