; Split entries: y[i] = x[i] * x[i]. The forward fills the frame in *frame_out, or a new zeroed
; one when that is null, and leaves it there (x[i] taped: a split reverse reads no primal memory),
; working on a stack copy of it (%frame) copied back before it returns;
; `grad.rev` runs the reverse sweep on a copy of the frame (its loop counter is stepped back
; there) and frees nothing; `grad.reset` releases what one call made and keeps the frame for
; the next forward; `grad.drop` frees the frame and its tape array; `grad.free` is both.
; RUN: %opt -p reverse-mode --fn f --activity dup,dup,const --noalias --split %s | %filecheck %s

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %m = fmul double %a, %a
  %py = getelementptr double, ptr %y, i64 %i
  store double %m, ptr %py, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

; CHECK-LABEL: define void @grad.aug.0(ptr %x, ptr %y, i64 %n, ptr %x.shadow, ptr %y.shadow, ptr %frame.out)
; CHECK: %[[OLD:.*]] = load ptr, ptr %frame.out
; CHECK: icmp eq ptr %[[OLD]], null
; CHECK: call ptr @malloc
; CHECK: call void @llvm.memset
; CHECK: %[[HEAP:.*]] = phi ptr
; CHECK-NEXT: call void @llvm.memcpy.p0.p0.i64(ptr %frame, ptr %[[HEAP]], i64 32, i1 false)
; CHECK: call ptr @realloc
; CHECK: store ptr %[[HEAP]], ptr %frame.out
; CHECK: call void @llvm.memcpy.p0.p0.i64(ptr %[[HEAP]], ptr %frame, i64 32, i1 false)
; CHECK-NEXT: ret void
; CHECK-LABEL: define internal void @grad.sweep(
; CHECK-NOT: call void @free
; CHECK: ret void
; CHECK-LABEL: define internal void @grad.free.0(ptr %frame)
; CHECK-NOT: call void @free
; CHECK: ret void
; CHECK-LABEL: define internal void @grad.aug.0.drop(ptr %frame)
; CHECK: call void @free
; CHECK: call void @free(ptr %frame)
; CHECK-LABEL: define void @grad.rev(
; CHECK: %frame.copy = alloca
; CHECK: call void @llvm.memcpy.p0.p0.i64(ptr %frame.copy, ptr %frame,
; CHECK: call void @grad.sweep(
; CHECK-LABEL: define void @grad.reset(ptr %frame)
; CHECK-NEXT: entry:
; CHECK-NEXT: call void @grad.free.0(ptr %frame)
; CHECK-NEXT: ret void
; CHECK-LABEL: define void @grad.drop(ptr %frame)
; CHECK: call void @grad.aug.0.drop(ptr %frame)
; CHECK-LABEL: define void @grad.free(ptr %frame)
; CHECK: call void @grad.free.0(ptr %frame)
; CHECK: call void @grad.aug.0.drop(ptr %frame)
