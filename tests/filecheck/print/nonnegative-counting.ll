; Counting values (analysis/nonnegative.py): GMM's packed triangular index. The inner loop
; exits on li (no wrap flags) reaching li0 + r, where r steps down and is not known >= 0; j
; steps with it (`add nuw`, no nsw) from i + 1. li starts at 0 and only takes +1 steps: on the
; exit edge li0 + r equals li + 1 (`icmp eq`), so the outer phi carries a counting value too.
; A counter that starts at a value that may be negative (%s) does not count, nor one of i32,
; nor a sum with a step that is not 1.
; RUN: %opt -p print --what nonnegative --nonnegative 2 %s | %filecheck %s

define void @f(ptr %q, ptr %l, i64 %d, i64 %s, i32 %w) {
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
  %sneg = phi i64 [ %s, %inner.ph ], [ %sneg1, %inner ]
  %narrow = phi i32 [ 0, %inner.ph ], [ %narrow1, %inner ]
  %big = phi i64 [ 0, %inner.ph ], [ %big1, %inner ]
  %j1 = add nuw i64 %j, 1
  %sneg1 = add i64 %sneg, 1
  %narrow1 = add i32 %narrow, 1
  %big1 = add i64 %big, 2
  %jneg = icmp slt i64 %j, 0
  %lineg = icmp slt i64 %li, 0
  %pj = getelementptr double, ptr %q, i64 %j
  %pl = getelementptr double, ptr %l, i64 %li
  %v = load double, ptr %pl, align 8
  store double %v, ptr %pj, align 8
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

; CHECK-LABEL: %r: maybe negative
; CHECK: %li0: nonnegative
; CHECK: %i: nonnegative
; CHECK: %end: maybe negative
; CHECK: %li: nonnegative
; CHECK: %j: nonnegative
; CHECK: %sneg: maybe negative
; CHECK: %narrow: maybe negative
; CHECK: %big: maybe negative
; CHECK: %j1: nonnegative
; CHECK: %li1: nonnegative
; CHECK: %li.out: nonnegative
