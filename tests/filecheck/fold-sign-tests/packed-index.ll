; GMM's packed triangular index (print/nonnegative-counting.ll has the facts): the wraparound
; tests of the inner counter j and of the packed index li fold; the one of a counter from a
; value that may be negative (%s) stays.
; RUN: %opt -p fold-sign-tests --fn f --nonnegative 2 %s | %filecheck %s

define void @f(ptr %q, ptr %l, i64 %d, i64 %s) {
entry:
  %r0 = add nsw i64 %d, -1
  br label %outer
outer:
  %r = phi i64 [ %r0, %entry ], [ %r.next, %latch ]
  %li0 = phi i64 [ 0, %entry ], [ %li.out, %latch ]
  %i = phi i64 [ 0, %entry ], [ %i1, %latch ]
  %i1 = add nuw nsw i64 %i, 1
  %more = icmp sgt i64 %d, %i1
  br i1 %more, label %inner.ph, label %latch
inner.ph:
  %end = add i64 %li0, %r
  br label %inner
inner:
  %li = phi i64 [ %li0, %inner.ph ], [ %li1, %inner ]
  %j = phi i64 [ %i1, %inner.ph ], [ %j1, %inner ]
  %t = phi i64 [ %s, %inner.ph ], [ %t1, %inner ]
  %j1 = add nuw i64 %j, 1
  %t1 = add i64 %t, 1
  %jneg = icmp slt i64 %j, 0
  %jw = select i1 %jneg, i64 %d, i64 0
  %jx = add i64 %jw, %j
  %lineg = icmp slt i64 %li, 0
  %lw = select i1 %lineg, i64 %d, i64 0
  %lx = add i64 %lw, %li
  %tneg = icmp slt i64 %t, 0
  %tw = select i1 %tneg, i64 %d, i64 0
  %tx = add i64 %tw, %t
  %pj = getelementptr double, ptr %q, i64 %jx
  %pl = getelementptr double, ptr %l, i64 %lx
  %pt = getelementptr double, ptr %l, i64 %tx
  %v = load double, ptr %pl, align 8
  %u = load double, ptr %pt, align 8
  %vu = fadd double %v, %u
  store double %vu, ptr %pj, align 8
  %li1 = add i64 %li, 1
  %done = icmp eq i64 %li1, %end
  br i1 %done, label %latch, label %inner
latch:
  %li.out = phi i64 [ %li0, %outer ], [ %end, %inner ]
  %r.next = add nsw i64 %r, -1
  %stop = icmp eq i64 %i1, %d
  br i1 %stop, label %exit, label %outer
exit:
  ret void
}

; CHECK-LABEL: define void @f(
; CHECK: %jw = select i1 false, i64 %d, i64 0
; CHECK: %lw = select i1 false, i64 %d, i64 0
; CHECK: %tw = select i1 %tneg, i64 %d, i64 0
