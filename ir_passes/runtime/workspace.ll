; Tape arrays kept between calls of one gradient. A workspace is n 8-byte fields (capacities and
; array pointers); a global slot holds the parked one. `take` empties the slot (another thread
; then starts fresh) and copies the fields out; `park` stores them back, reusing the workspace
; block, and frees whatever another call parked meanwhile (its first `pointers` fields are
; pointers). `release` empties the slot and frees what was parked (the gradient's `<name>.release`).

define internal ptr @enzpy.take(ptr %slot, ptr %dst, i64 %n) {
entry:
  %ws = atomicrmw xchg ptr %slot, ptr null acq_rel, align 8
  %none = icmp eq ptr %ws, null
  %bytes = mul i64 %n, 8
  br i1 %none, label %zero, label %copy
zero:
  call void @llvm.memset.p0.i64(ptr %dst, i8 0, i64 %bytes, i1 false)
  ret ptr null
copy:
  call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %ws, i64 %bytes, i1 false)
  ret ptr %ws
}

define internal void @enzpy.park(ptr %slot, ptr %ws, ptr %src, i64 %n, i64 %pointers) {
entry:
  %bytes = mul i64 %n, 8
  %none = icmp eq ptr %ws, null
  br i1 %none, label %fresh, label %fill
fresh:
  %new = call ptr @malloc(i64 %bytes)
  br label %fill
fill:
  %w = phi ptr [ %ws, %entry ], [ %new, %fresh ]
  call void @llvm.memcpy.p0.p0.i64(ptr %w, ptr %src, i64 %bytes, i1 false)
  %old = atomicrmw xchg ptr %slot, ptr %w acq_rel, align 8
  call void @enzpy.free_workspace(ptr %old, i64 %n, i64 %pointers)
  ret void
}

define internal void @enzpy.release(ptr %slot, i64 %n, i64 %pointers) {
entry:
  %old = atomicrmw xchg ptr %slot, ptr null acq_rel, align 8
  call void @enzpy.free_workspace(ptr %old, i64 %n, i64 %pointers)
  ret void
}

; A workspace taken out of its slot: its pointer fields (the first `pointers`), then itself.
define internal void @enzpy.free_workspace(ptr %old, i64 %n, i64 %pointers) {
entry:
  %empty = icmp eq ptr %old, null
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %isptr = icmp slt i64 %i, %pointers
  br i1 %isptr, label %drop, label %next
drop:
  %p = getelementptr ptr, ptr %old, i64 %i
  %v = load ptr, ptr %p
  call void @free(ptr %v)
  br label %next
next:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %last
last:
  call void @free(ptr %old)
  br label %done
done:
  ret void
}

declare ptr @malloc(i64)
declare void @free(ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
