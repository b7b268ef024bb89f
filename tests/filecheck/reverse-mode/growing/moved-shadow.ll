; A reallocation that moves a handle's data (a growing list; transforms/reverse/shadows/growing.py): the
; forward sweep moves the shadow too, into a zeroed buffer of the new size that receives the
; old shadow's first min(old, n) bytes (the old one stays until the gradient ends), and tapes
; the old shadow and the bytes kept; where the reverse sweep passes the reallocation, it copies
; the kept bytes' adjoints back to the old shadow, which the loads before it reach.
; RUN: %opt -p reverse-mode --fn f --activity dup,dup --noalias --handles h.alloc:h.data:h.retain:h.release:h.grow %s | %filecheck %s

declare ptr @h.alloc(i64)
declare ptr @h.data(ptr)
declare void @h.retain(ptr)
declare void @h.release(ptr)
declare ptr @h.grow(ptr, i64)

define void @f(ptr %x, ptr %out) {
entry:
  %h = call ptr @h.alloc(i64 8)
  %d = call ptr @h.data(ptr %h)
  %a = load double, ptr %x, align 8
  store double %a, ptr %d, align 8
  %d2 = call ptr @h.grow(ptr %h, i64 16)
  %b = load double, ptr %d2, align 8
  %sq = fmul double %b, %b
  store double %sq, ptr %out, align 8
  call void @h.release(ptr %h)
  ret void
}

; CHECK-LABEL: define void @grad(
; CHECK: %d2 = call ptr @h.grow(ptr %h, i64 16)
; CHECK-NEXT: [[OLD:%t\.[0-9]+]] = load ptr, ptr %h.shadow.cell, align 8
; CHECK-NEXT: [[OLDAT:%t\.[0-9]+]] = getelementptr i8, ptr %frame, i64 48
; CHECK-NEXT: store ptr [[OLD]], ptr [[OLDAT]]
; CHECK: %d2.shadow = call ptr @malloc(i64 16)
; CHECK: call void @llvm.memset.p0.i64(ptr %d2.shadow, i8 0, i64 16, i1 false)
; CHECK: [[KEPT:%t\.[0-9]+]] = select i1 %{{t\.[0-9]+}}, i64 %{{t\.[0-9]+}}, i64 16
; CHECK-NEXT: [[KEPTAT:%t\.[0-9]+]] = getelementptr i8, ptr %frame, i64 56
; CHECK-NEXT: store i64 [[KEPT]], ptr [[KEPTAT]]
; CHECK-NEXT: call void @llvm.memcpy.p0.p0.i64(ptr %d2.shadow, ptr [[OLD]], i64 [[KEPT]], i1 false)
; CHECK-NEXT: store ptr %d2.shadow, ptr %h.shadow.cell, align 8
; CHECK: rev.entry:
; CHECK: [[ROLDAT:%t\.[0-9]+]] = getelementptr i8, ptr %frame, i64 48
; CHECK-NEXT: [[ROLD:%t\.[0-9]+]] = load ptr, ptr [[ROLDAT]]
; CHECK-NEXT: [[RKEPTAT:%t\.[0-9]+]] = getelementptr i8, ptr %frame, i64 56
; CHECK-NEXT: [[RKEPT:%t\.[0-9]+]] = load i64, ptr [[RKEPTAT]]
; CHECK-NEXT: call void @llvm.memcpy.p0.p0.i64(ptr [[ROLD]], ptr %{{t\.[0-9]+}}, i64 [[RKEPT]], i1 false)
; CHECK: finish:
; CHECK-NEXT: call void @enzpy.free_allocations(ptr %frame)
