; runtime/growable_list.ll: the growable list the allocation and children lists keep their
; entries in, written once; with a heap without realloc, growth goes through enzpy.heap.realloc.
; RUN: %opt -p runtime --helpers enzpy.push_allocation,enzpy.push_child %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.push_allocation --heap my_alloc,my_free %s | %filecheck %s --check-prefix=HEAP

; CHECK-LABEL: define internal void @enzpy.push_allocation(ptr %list, ptr %p) {
; CHECK: %slot = call ptr @enzpy.list.append(ptr %list, i64 8, i64 8)
; CHECK-LABEL: define internal ptr @enzpy.list.append(ptr %list, i64 %width, i64 %extra) {
; CHECK: %full = icmp sge i64 %cnt, %cap
; CHECK: grow:
; CHECK-NEXT: %old = load ptr, ptr %list
; CHECK-NEXT: %c2 = mul i64 %cap, 2
; CHECK-NEXT: %c3 = add i64 %c2, %extra
; CHECK-NEXT: %bytes = mul i64 %c3, %width
; CHECK-NEXT: %oldbytes = mul i64 %cap, %width
; CHECK-NEXT: %new = call ptr @realloc(ptr %old, i64 %bytes)
; CHECK: put:
; CHECK-NEXT: %data = load ptr, ptr %list
; CHECK-NEXT: %off = mul i64 %cnt, %width
; CHECK-NEXT: %slot = getelementptr i8, ptr %data, i64 %off
; CHECK-NEXT: %c1 = add i64 %cnt, 1
; CHECK-NEXT: store i64 %c1, ptr %cntp
; CHECK-NEXT: ret ptr %slot
; CHECK-LABEL: define internal void @enzpy.push_child(ptr %list, ptr %fn, ptr %frame) {
; CHECK: %slot = call ptr @enzpy.list.append(ptr %list, i64 16, i64 2)

; HEAP-LABEL: define internal ptr @enzpy.list.append(ptr %list, i64 %width, i64 %extra) {
; HEAP: %new = call ptr @enzpy.heap.realloc(ptr %old, i64 %oldbytes, i64 %bytes)
