; runtime/allocation_list.ll: The allocation list; with a heap without realloc, growth goes through enzpy.heap.realloc.
; RUN: %opt -p runtime --helpers enzpy.push_allocation %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.push_allocation --heap my_alloc,my_free %s | %filecheck %s --check-prefix=HEAP

; CHECK-LABEL: define internal void @enzpy.push_allocation(ptr %list, ptr %p) {
; CHECK: %new = call ptr @realloc(ptr %old, i64 %bytes)
; CHECK-LABEL: define internal void @enzpy.free_allocations(ptr %list) {
; CHECK: call void @free(ptr %p)
; CHECK: call void @free(ptr %data)

; HEAP-LABEL: define internal void @enzpy.push_allocation(ptr %list, ptr %p) {
; HEAP: %new = call ptr @enzpy.heap.realloc(ptr %old, i64 %oldbytes, i64 %bytes)
; HEAP-LABEL: define internal void @enzpy.free_allocations(ptr %list) {
; HEAP: call void @enzpy.heap.free(ptr %p)
; HEAP: call void @enzpy.heap.free(ptr %data)
