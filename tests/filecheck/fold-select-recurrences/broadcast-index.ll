; A broadcasting loop's operand indices: %j advances with the counter when %c (loop-invariant)
; says its axis is not broadcast, else stays at 0; %k the same with the arms swapped. Both selects
; become closed forms of the counter. %v's condition varies in the loop, and %w's phi takes a
; second value from inside the loop: both stay.
; RUN: %opt -p fold-select-recurrences --fn f %s | %filecheck %s

define void @f(ptr %a, ptr %b, i64 %n, i64 %d) {
entry:
  %c = icmp ugt i64 %d, 1
  %nc = icmp ule i64 %d, 1
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %j = phi i64 [ 0, %entry ], [ %j1, %loop ]
  %k = phi i64 [ 2, %entry ], [ %k1, %loop ]
  %v = phi i64 [ 0, %entry ], [ %v1, %loop ]
  %w = phi i64 [ 0, %entry ], [ %w1, %loop ]
  %j1 = select i1 %c, i64 %i, i64 %j
  %k1 = select i1 %nc, i64 %k, i64 %i
  %odd = trunc i64 %i to i1
  %v1 = select i1 %odd, i64 %i, i64 %v
  %w0 = select i1 %c, i64 %i, i64 %w
  %w1 = add i64 %w0, 1
  %p = getelementptr double, ptr %a, i64 %j1
  %x = load double, ptr %p, align 8
  %s = add i64 %k1, %v1
  %t = add i64 %s, %w1
  %q = getelementptr double, ptr %b, i64 %t
  store double %x, ptr %q, align 8
  %i1 = add nuw i64 %i, 1
  %end = icmp eq i64 %i1, %n
  br i1 %end, label %done, label %loop
done:
  ret void
}

; CHECK-LABEL: define void @f(
; CHECK: %j1 = select i1 %c, i64 %i, i64 0
; CHECK: %k1 = select i1 %nc, i64 2, i64 %i
; CHECK: %v1 = select i1 %odd, i64 %i, i64 %v
; CHECK: %w0 = select i1 %c, i64 %i, i64 %w

; A loop nest: the inner index starts each row where the last row left it (the outer phi and the
; inner loop's exit phi carry it); with %c false it never leaves 0.
; RUN: %opt -p fold-select-recurrences --fn g %s | %filecheck %s --check-prefix=NEST

define void @g(ptr %a, i64 %n, i64 %m, i64 %d) {
entry:
  %c = icmp ugt i64 %d, 1
  br label %outer
outer:
  %r = phi i64 [ 0, %entry ], [ %r1, %latch ]
  %j = phi i64 [ 0, %entry ], [ %jl, %latch ]
  br label %inner
inner:
  %i = phi i64 [ 0, %outer ], [ %i1, %inner ]
  %ji = phi i64 [ %j, %outer ], [ %j1, %inner ]
  %j1 = select i1 %c, i64 %i, i64 %ji
  %p = getelementptr double, ptr %a, i64 %j1
  store double 0.0, ptr %p, align 8
  %i1 = add nuw i64 %i, 1
  %e = icmp eq i64 %i1, %m
  br i1 %e, label %latch, label %inner
latch:
  %jl = phi i64 [ %j1, %inner ]
  %r1 = add nuw i64 %r, 1
  %f = icmp eq i64 %r1, %n
  br i1 %f, label %done, label %outer
done:
  ret void
}

; NEST-LABEL: define void @g(
; NEST: %j1 = select i1 %c, i64 %i, i64 0
