; An allocation outside every loop whose allocator counts references (transforms/reverse/
; retain.py): the forward sweep takes one more reference right after it and keeps the handle in
; the frame's first field; the gradient's exit drops it after the reverse sweep.
; RUN: %opt -p reverse-mode --fn f --activity dup,dup --noalias --handles h.alloc:h.data:h.retain:h.release %s | %filecheck %s

declare ptr @h.alloc(i64)
declare ptr @h.data(ptr)
declare void @h.retain(ptr)
declare void @h.release(ptr)

define void @f(ptr %x, ptr %out) {
entry:
  %h = call ptr @h.alloc(i64 8)
  %d = call ptr @h.data(ptr %h)
  %a = load double, ptr %x, align 8
  store double %a, ptr %d, align 8
  %b = load double, ptr %d, align 8
  %sq = fmul double %b, %b
  store double %sq, ptr %out, align 8
  call void @h.release(ptr %h)
  ret void
}

; CHECK-LABEL: define void @grad(
; CHECK: state:
; CHECK-NEXT: store ptr null, ptr %frame
; CHECK: fwd.entry:
; CHECK-NEXT: %h = call ptr @h.alloc(i64 8)
; CHECK-NEXT: call void @h.retain(ptr %h)
; CHECK-NEXT: store ptr %h, ptr %frame
; CHECK: call void @h.release(ptr %h)
; CHECK-NEXT: br label %rev.entry
; CHECK: finish:
; CHECK: [[KEPT:%t\.[0-9]+]] = load ptr, ptr %frame
; CHECK-NEXT: call void @h.release(ptr [[KEPT]])
; CHECK-NEXT: ret void

