; A gemv's rank-1 shadow update dA += dy x^T in a loop (transforms/reverse/shadows/deferred_rank1.py): A,
; its shape and the gemm are the same on every iteration, so each reverse iteration appends the
; column pair (dy, x) to a buffer (the tape's arena) and @grad.rank1.0 adds them as one gemm
; (A^T-shaped product of inner dimension the pairs' count): when the buffer passes LIMIT bytes
; inside the loop, and for all that is left when the reverse sweep leaves the loop.
; RUN: %opt -p reverse-mode --activity dup,dup,dup,const,const,const --noalias --blas gemv:gemv,gemm:gemm %s | %filecheck %s

declare i32 @gemv(i8, i8, i64, i64, ptr, ptr, i64, ptr, ptr, ptr)
declare i32 @gemm(i8, i8, i8, i64, i64, i64, ptr, ptr, i64, ptr, i64, ptr, ptr, i64)

define void @f(ptr noalias %A, ptr noalias %xs, ptr noalias %ys, i64 %m, i64 %n, i64 %steps) {
entry:
  %alpha = alloca double, align 8
  %beta = alloca double, align 8
  br label %loop
loop:
  %t = phi i64 [ 0, %entry ], [ %t1, %loop ]
  %xo = mul i64 %t, %n
  %x = getelementptr double, ptr %xs, i64 %xo
  %yo = mul i64 %t, %m
  %y = getelementptr double, ptr %ys, i64 %yo
  store double 1.0, ptr %alpha, align 8
  store double 0.0, ptr %beta, align 8
  %st = call i32 @gemv(i8 100, i8 110, i64 %m, i64 %n, ptr %alpha, ptr %A, i64 %m, ptr %x, ptr %beta, ptr %y)
  %t1 = add i64 %t, 1
  %more = icmp slt i64 %t1, %steps
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

; CHECK-LABEL: define void @grad(
; CHECK: rev.loop:
; CHECK: [[AT:%t\.[0-9]+]] = call i64 @enzpy.arena_push(
; CHECK: [[PAIR:%t\.[0-9]+]] = getelementptr i8, ptr %{{t\.[0-9]+}}, i64 [[AT]]
; CHECK-NEXT: call void @llvm.memcpy.p0.p0.i64(ptr [[PAIR]], ptr [[DY:%t\.[0-9]+]], i64 [[M:%t\.[0-9]+]], i1 false)
; CHECK-NEXT: [[XCOL:%t\.[0-9]+]] = getelementptr i8, ptr [[PAIR]], i64 [[M]]
; CHECK-NEXT: call void @llvm.memcpy.p0.p0.i64(ptr [[XCOL]], ptr %x.re, i64 %{{t\.[0-9]+}}, i1 false)
; CHECK: call void @grad.rank1.0(ptr %{{t\.[0-9]+}}, ptr %{{t\.[0-9]+}}, i64 %m, i64 %n, i64 %m, ptr %A.shadow, i64 262144)
; CHECK: call i32 @gemv(i8 100, i8 116, i64 %m, i64 %{{t\.[0-9]+}}, ptr %{{t\.[0-9]+}}, ptr %A, i64 %m, ptr [[DY]], ptr %{{t\.[0-9]+}}, ptr %{{t\.[0-9]+}})
; CHECK: rev.leave.loop.entry:
; CHECK: call void @grad.rank1.0(ptr %{{t\.[0-9]+}}, ptr %{{t\.[0-9]+}}, i64 %m, i64 %n, i64 %m, ptr %A.shadow, i64 0)
; CHECK-LABEL: define internal void @grad.rank1.0(ptr %buf, ptr %used, i64 %m, i64 %n, i64 %lda, ptr %da, i64 %limit) {
; CHECK: [[USED:%t\.[0-9]+]] = load i64, ptr %used
; CHECK-NEXT: [[OVER:%t\.[0-9]+]] = icmp ugt i64 [[USED]], %limit
; CHECK-NEXT: br i1 [[OVER]], label %gemm, label %done
; CHECK: gemm:
; CHECK: [[K:%t\.[0-9]+]] = udiv i64 [[USED]], %{{t\.[0-9]+}}
; CHECK: call i32 @gemm(i8 100, i8 110, i8 116, i64 %{{t\.[0-9]+}}, i64 %n, i64 [[K]], ptr %{{t\.[0-9]+}}, ptr %{{t\.[0-9]+}}, i64 %{{t\.[0-9]+}}, ptr %{{t\.[0-9]+}}, i64 %{{t\.[0-9]+}}, ptr %{{t\.[0-9]+}}, ptr %da, i64 %lda)
; CHECK: store i64 0, ptr %used
