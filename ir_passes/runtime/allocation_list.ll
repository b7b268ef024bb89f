; The shadow allocations of one call, so that every one is freed at the end or on an error path.
; A list is {ptr data, i64 count, i64 capacity} in the frame.

define internal void @enzpy.push_allocation(ptr %list, ptr %p) {
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
  %c3 = add i64 %c2, 8
  %bytes = mul i64 %c3, 8
  %oldbytes = mul i64 %cap, 8
  %new = call ptr @realloc(ptr %old, i64 %bytes)
  store ptr %new, ptr %list
  store i64 %c3, ptr %capp
  br label %put
put:
  %data = load ptr, ptr %list
  %slot = getelementptr ptr, ptr %data, i64 %cnt
  store ptr %p, ptr %slot
  %c1 = add i64 %cnt, 1
  store i64 %c1, ptr %cntp
  ret void
}

define internal void @enzpy.free_allocations(ptr %list) {
entry:
  %data = load ptr, ptr %list
  %cntp = getelementptr i8, ptr %list, i64 8
  %cnt = load i64, ptr %cntp
  %none = icmp sle i64 %cnt, 0
  br i1 %none, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %slot = getelementptr ptr, ptr %data, i64 %i
  %p = load ptr, ptr %slot
  call void @free(ptr %p)
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %cnt
  br i1 %more, label %loop, label %done
done:
  call void @free(ptr %data)
  ret void
}

declare ptr @realloc(ptr, i64)
declare void @free(ptr)
