; runtime/allocation_list.ll: The allocation list; with a heap without realloc, growth goes through enzpy.heap.realloc.
; RUN: %opt -p runtime --helpers enzpy.push_allocation %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.push_allocation --heap my_alloc,my_free %s | %filecheck %s --check-prefix=HEAP

; CHECK-LABEL: define internal void @enzpy.push_allocation(ptr %list, ptr %p) {
; CHECK: %slot = call ptr @enzpy.list.append(ptr %list, i64 8, i64 8)
; CHECK-LABEL: define internal void @enzpy.free_allocations(ptr %list) {
; CHECK: call void @free(ptr %p)
; CHECK: call void @free(ptr %data)

; HEAP-LABEL: define internal void @enzpy.push_allocation(ptr %list, ptr %p) {
; HEAP: %slot = call ptr @enzpy.list.append(ptr %list, i64 8, i64 8)
; HEAP-LABEL: define internal void @enzpy.free_allocations(ptr %list) {
; HEAP: call void @enzpy.heap.free(ptr %p)
; HEAP: call void @enzpy.heap.free(ptr %data)
