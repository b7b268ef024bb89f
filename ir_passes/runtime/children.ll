; The frames of differentiated callees that returned, as (free function, frame) pairs. If this
; call fails later, their reverse never runs: `free_children` releases them through their free
; functions. After a reverse sweep each child has freed itself: `drop_children` frees the list.
; The list starts with room for two (a recursive kernel's frames have few children each).

define internal void @enzpy.push_child(ptr %list, ptr %fn, ptr %frame) {
entry:
  %isnull = icmp eq ptr %frame, null
  br i1 %isnull, label %done, label %push
push:
  %cntp = getelementptr i8, ptr %list, i64 8
  %capp = getelementptr i8, ptr %list, i64 16
  %cnt = load i64, ptr %cntp
  %cap = load i64, ptr %capp
  %full = icmp sge i64 %cnt, %cap
  br i1 %full, label %grow, label %put
grow:
  %old = load ptr, ptr %list
  %c2 = mul i64 %cap, 2
  %c3 = add i64 %c2, 2
  %bytes = mul i64 %c3, 16
  %oldbytes = mul i64 %cap, 16
  %new = call ptr @realloc(ptr %old, i64 %bytes)
  store ptr %new, ptr %list
  store i64 %c3, ptr %capp
  br label %put
put:
  %data = load ptr, ptr %list
  %slot = getelementptr [2 x ptr], ptr %data, i64 %cnt
  store ptr %fn, ptr %slot
  %slot2 = getelementptr i8, ptr %slot, i64 8
  store ptr %frame, ptr %slot2
  %c1 = add i64 %cnt, 1
  store i64 %c1, ptr %cntp
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

declare ptr @realloc(ptr, i64)
declare void @free(ptr)
