; For a heap other than libc's (heap.py): a null-safe free with @FREE, and realloc by
; @ALLOCATE + copy + free for a heap without a realloc.

define internal void @enzpy.heap.free(ptr %p) {
entry:
  %null = icmp eq ptr %p, null
  br i1 %null, label %done, label %release
release:
  call void @{{FREE}}(ptr %p)
  br label %done
done:
  ret void
}

define internal ptr @enzpy.heap.realloc(ptr %old, i64 %oldbytes, i64 %bytes) {
entry:
  %new = call ptr @{{ALLOCATE}}(i64 %bytes)
  %null = icmp eq ptr %old, null
  br i1 %null, label %done, label %move
move:
  %less = icmp ult i64 %oldbytes, %bytes
  %n = select i1 %less, i64 %oldbytes, i64 %bytes
  call void @llvm.memcpy.p0.p0.i64(ptr %new, ptr %old, i64 %n, i1 false)
  call void @{{FREE}}(ptr %old)
  br label %done
done:
  ret ptr %new
}

declare ptr @{{ALLOCATE}}(i64)
declare void @{{FREE}}(ptr)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
