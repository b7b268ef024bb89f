; The workspace helpers of workspace.ll for tapes that live for one call (fresh_workspace.py):
; `take` starts from an empty frame, `park` frees the tape arrays with @FREE, skipping null.

define internal ptr @enzpy.take(ptr %slot, ptr %dst, i64 %n) {
entry:
  %bytes = mul i64 %n, 8
  call void @llvm.memset.p0.i64(ptr %dst, i8 0, i64 %bytes, i1 false)
  ret ptr null
}

define internal void @enzpy.park(ptr %slot, ptr %ws, ptr %src, i64 %n, i64 %pointers) {
entry:
  %empty = icmp sle i64 %pointers, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %p = getelementptr ptr, ptr %src, i64 %i
  %v = load ptr, ptr %p
  %null = icmp eq ptr %v, null
  br i1 %null, label %next, label %drop
drop:
  call void @"{{FREE}}"(ptr %v)
  br label %next
next:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %pointers
  br i1 %more, label %loop, label %done
done:
  ret void
}

declare void @"{{FREE}}"(ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
