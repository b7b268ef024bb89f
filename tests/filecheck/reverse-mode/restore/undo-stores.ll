; Restoring overwritten memory (transforms/reverse/tape/restore.py): u[i] is read, then a later loop
; clears u. With u's extent known (--extents), the forward sweep saves each value the clearing
; store overwrites, the reverse of that store puts it back, and the reverse of the first loop
; loads u[i] again instead of taping it; u's final contents are copied aside at the end of the
; forward sweep (runtime/buffer.ll) and copied back when the reverse sweep finishes. Without
; the extent u[i] is taped.
; RUN: %opt -p reverse-mode --activity dup,dup,const,const,const --noalias --extents 0=2.3:4:f64 %s | %filecheck %s
; RUN: %opt -p reverse-mode --activity dup,dup,const,const,const --noalias %s | %filecheck %s --check-prefix=TAPE

define void @f(ptr noalias %u, ptr noalias %y, i64 %n, i64 %stride, i64 %size) {
entry:
  br label %read
read:
  %i = phi i64 [ 0, %entry ], [ %i1, %read ]
  %pu = getelementptr double, ptr %u, i64 %i
  %a = load double, ptr %pu, align 8
  %m = fmul double %a, %a
  %py = getelementptr double, ptr %y, i64 %i
  store double %m, ptr %py, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %read, label %clear
clear:
  %j = phi i64 [ 0, %read ], [ %j1, %clear ]
  %qu = getelementptr double, ptr %u, i64 %j
  store double 0.0, ptr %qu, align 8
  %j1 = add i64 %j, 1
  %again = icmp slt i64 %j1, %n
  br i1 %again, label %clear, label %exit
exit:
  ret void
}

; CHECK-LABEL: define void @grad(
; CHECK: fwd.read:
; CHECK: %a = load double, ptr %pu, align 8
; CHECK-NEXT: %m = fmul double %a, %a
; CHECK: fwd.clear:
; CHECK: [[OLD:%.*]] = load double, ptr %qu, align 8
; CHECK: store double [[OLD]], ptr
; CHECK: store double 0.0, ptr %qu, align 8
; CHECK: fwd.exit:
; CHECK: call ptr @enzpy.buffer(
; CHECK-NEXT: call void @llvm.memcpy.p0.p0.i64(
; CHECK: rev.read:
; CHECK: %pu.re = getelementptr double, ptr %u, i64
; CHECK-NEXT: load double, ptr %pu.re, align 8
; CHECK: rev.clear:
; CHECK: %qu.re = getelementptr double, ptr %u, i64
; CHECK-NEXT: store double %{{.*}}, ptr %qu.re, align 8
; CHECK: finish:
; CHECK: call void @llvm.memcpy.p0.p0.i64(

; TAPE-LABEL: define void @grad(
; TAPE: fwd.read:
; TAPE: %a = load double, ptr %pu, align 8
; TAPE: store double %a, ptr
; TAPE-NOT: enzpy.buffer
; TAPE: rev.read:
