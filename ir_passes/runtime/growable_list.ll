; A growable list in the frame: {ptr data, i64 count, i64 capacity}, entries of `width` bytes
; (allocation_list.ll, object_list.ll and children.ll keep theirs in one). `append` makes room
; for one more entry, growing the capacity to 2 * capacity + `extra` when full, counts it and
; returns its address.

define internal ptr @enzpy.list.append(ptr %list, i64 %width, i64 %extra) {
entry:
  %cntp = getelementptr i8, ptr %list, i64 8
  %capp = getelementptr i8, ptr %list, i64 16
  %cnt = load i64, ptr %cntp
  %cap = load i64, ptr %capp
  %full = icmp sge i64 %cnt, %cap
  br i1 %full, label %grow, label %put
grow:
  %old = load ptr, ptr %list
  %c2 = mul i64 %cap, 2
  %c3 = add i64 %c2, %extra
  %bytes = mul i64 %c3, %width
  %oldbytes = mul i64 %cap, %width
  %new = call ptr @realloc(ptr %old, i64 %bytes)
  store ptr %new, ptr %list
  store i64 %c3, ptr %capp
  br label %put
put:
  %data = load ptr, ptr %list
  %off = mul i64 %cnt, %width
  %slot = getelementptr i8, ptr %data, i64 %off
  %c1 = add i64 %cnt, 1
  store i64 %c1, ptr %cntp
  ret ptr %slot
}

declare ptr @realloc(ptr, i64)
