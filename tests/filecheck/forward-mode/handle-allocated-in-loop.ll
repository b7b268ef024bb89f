; An array allocated in a loop, after loop rotation: one handle allocation in the entry, one in
; the latch, and the data asked of their phi. Each allocation gets a shadow handle (its data
; zeroed), the phi a phi of the shadow handles, the data's shadow is asked of that phi (not of
; the primal handle: that would be the primal's data), and the release is repeated on it.
; RUN: %opt -p forward-mode --fn f --activity dup,dup --handles h.alloc:h.data:h.retain:h.release %s | %filecheck %s

declare ptr @h.alloc(i64)
declare ptr @h.data(ptr)
declare void @h.retain(ptr)
declare void @h.release(ptr)

define void @f(ptr %x, ptr %out) {
entry:
  %h0 = call ptr @h.alloc(i64 8)
  br label %loop
loop:
  %h = phi ptr [ %h0, %entry ], [ %h1, %latch ]
  %i = phi i64 [ 0, %entry ], [ %i1, %latch ]
  %s = phi double [ 0.0, %entry ], [ %s1, %latch ]
  %d = call ptr @h.data(ptr %h)
  %a = load double, ptr %x, align 8
  %sq = fmul double %a, %a
  store double %sq, ptr %d, align 8
  %b = load double, ptr %d, align 8
  %s1 = fadd double %s, %b
  call void @h.release(ptr %h)
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 2
  br i1 %done, label %exit, label %latch
latch:
  %h1 = call ptr @h.alloc(i64 8)
  br label %loop
exit:
  store double %s1, ptr %out, align 8
  ret void
}

; CHECK-LABEL: define void @fwd(ptr %x, ptr %out, ptr %x.shadow, ptr %out.shadow)
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %h0 = call ptr @h.alloc(i64 8)
; CHECK-NEXT:    %h0.handle = call ptr @h.alloc(i64 8)
; CHECK-NEXT:    [[D0:%.*]] = call ptr @h.data(ptr %h0.handle)
; CHECK-NEXT:    call void @llvm.memset.p0.i64(ptr [[D0]], i8 0, i64 8, i1 false)
; CHECK:       loop:
; CHECK-NEXT:    %h = phi ptr [ %h0, %entry ], [ %h1, %latch ]
; CHECK-NEXT:    %h.handle = phi ptr [ %h0.handle, %entry ], [ %h1.handle, %latch ]
; CHECK:         %d = call ptr @h.data(ptr %h)
; CHECK-NEXT:    %d.shadow = call ptr @h.data(ptr %h.handle)
; CHECK-NOT:     memset
; CHECK:         store double %sq, ptr %d, align 8
; CHECK-NEXT:    store double {{%.*}}, ptr %d.shadow, align 8
; CHECK:         call void @h.release(ptr %h)
; CHECK-NEXT:    [[SAME:%.*]] = icmp eq ptr %h.handle, %h
; CHECK-NEXT:    [[S:%.*]] = select i1 [[SAME]], ptr null, ptr %h.handle
; CHECK-NEXT:    call void @h.release(ptr [[S]])
; CHECK:       latch:
; CHECK-NEXT:    %h1 = call ptr @h.alloc(i64 8)
; CHECK-NEXT:    %h1.handle = call ptr @h.alloc(i64 8)
; CHECK-NEXT:    [[D1:%.*]] = call ptr @h.data(ptr %h1.handle)
; CHECK-NEXT:    call void @llvm.memset.p0.i64(ptr [[D1]], i8 0, i64 8, i1 false)
