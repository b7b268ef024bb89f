; A scratch buffer parked with the tape (restore.py's snapshots): at least `size` bytes at *slot,
; whose capacity is *capp; grown without keeping the contents.

define internal ptr @enzpy.buffer(ptr %slot, ptr %capp, i64 %size) {
entry:
  %cap = load i64, ptr %capp
  %p = load ptr, ptr %slot
  %small = icmp ult i64 %cap, %size
  br i1 %small, label %grow, label %done
grow:
  call void @free(ptr %p)
  %new = call ptr @malloc(i64 %size)
  store ptr %new, ptr %slot
  store i64 %size, ptr %capp
  ret ptr %new
done:
  ret ptr %p
}

declare ptr @malloc(i64)
declare void @free(ptr)
