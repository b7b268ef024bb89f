; The shadow objects of one call that a host's function RELEASE releases (rules/effects.py,
; constructors): a list like the allocations', each object released with @RELEASE (null: the
; constructor failed).

define internal void @enzpy.release_objects.{{RELEASE}}(ptr %list) {
entry:
  %data = load ptr, ptr %list
  %cntp = getelementptr i8, ptr %list, i64 8
  %cnt = load i64, ptr %cntp
  %none = icmp sle i64 %cnt, 0
  br i1 %none, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %slot = getelementptr ptr, ptr %data, i64 %i
  %p = load ptr, ptr %slot
  %made = icmp ne ptr %p, null
  br i1 %made, label %release, label %next
release:
  call void @{{RELEASE}}(ptr %p)
  br label %next
next:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %cnt
  br i1 %more, label %loop, label %done
done:
  call void @free(ptr %data)
  store ptr null, ptr %list
  store i64 0, ptr %cntp
  ret void
}

declare void @{{RELEASE}}(ptr)
declare void @free(ptr)
