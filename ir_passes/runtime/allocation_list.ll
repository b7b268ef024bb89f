; The shadow allocations of one call, so that every one is freed at the end or on an error path.
; A growable list of pointers (growable_list.ll).

define internal void @enzpy.push_allocation(ptr %list, ptr %p) {
entry:
  %slot = call ptr @enzpy.list.append(ptr %list, i64 8, i64 8)
  store ptr %p, ptr %slot
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

declare ptr @enzpy.list.append(ptr, i64, i64)
declare void @free(ptr)
