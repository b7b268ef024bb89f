; The frames of differentiated callees that returned, as (free function, frame) pairs. If this
; call fails later, their reverse never runs: `free_children` releases them through their free
; functions. After a reverse sweep each child has freed itself: `drop_children` frees the list.
; A growable list (growable_list.ll) of 16-byte entries; it starts with room for two (a
; recursive kernel's frames have few children each).

define internal void @enzpy.push_child(ptr %list, ptr %fn, ptr %frame) {
entry:
  %isnull = icmp eq ptr %frame, null
  br i1 %isnull, label %done, label %push
push:
  %slot = call ptr @enzpy.list.append(ptr %list, i64 16, i64 2)
  store ptr %fn, ptr %slot
  %slot2 = getelementptr i8, ptr %slot, i64 8
  store ptr %frame, ptr %slot2
  br label %done
done:
  ret void
}

define internal void @enzpy.free_children(ptr %list) {
entry:
  %data = load ptr, ptr %list
  %cntp = getelementptr i8, ptr %list, i64 8
  %cnt = load i64, ptr %cntp
  %none = icmp sle i64 %cnt, 0
  br i1 %none, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %slot = getelementptr [2 x ptr], ptr %data, i64 %i
  %fn = load ptr, ptr %slot
  %slot2 = getelementptr i8, ptr %slot, i64 8
  %frame = load ptr, ptr %slot2
  call void %fn(ptr %frame)
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %cnt
  br i1 %more, label %loop, label %done
done:
  call void @free(ptr %data)
  ret void
}

define internal void @enzpy.drop_children(ptr %list) {
entry:
  %data = load ptr, ptr %list
  call void @free(ptr %data)
  ret void
}

declare ptr @enzpy.list.append(ptr, i64, i64)
declare void @free(ptr)
