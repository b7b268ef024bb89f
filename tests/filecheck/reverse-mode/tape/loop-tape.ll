; The tape of a loop (transforms/reverse/tape/tape.py): acc / x[i] in a loop tapes the division's
; operand and result per iteration, in arrays indexed by the loop's counter. On entering the
; loop the arrays are reserved for its trip bound (trips.py: K + 2 iterations) and grown
; together when short; between calls they are parked in the gradient's workspace
; (runtime/workspace.ll). --fresh: tape arrays that live for one call, no workspace.
; RUN: %opt -p reverse-mode --activity dup,dup,const --noalias %s | %filecheck %s
; RUN: %opt -p reverse-mode --activity dup,dup,const --noalias --fresh %s | %filecheck %s --check-prefix=FRESH

define void @f(ptr noalias %x, ptr noalias %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi double [ 1.0, %entry ], [ %acc1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %acc1 = fdiv double %acc, %a
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  store double %acc1, ptr %y, align 8
  ret void
}

; CHECK-LABEL: define void @grad(
; CHECK: call ptr @enzpy.take(ptr @grad.workspace, ptr %parked, i64 3)
; CHECK: fwd.loop:
; CHECK: store double %acc, ptr
; CHECK: %acc1 = fdiv double %acc, %a
; CHECK-NEXT: [[C:%.*]] = load i64, ptr %frame
; CHECK: store double %acc1, ptr
; CHECK: call void @enzpy.park(ptr @grad.workspace,
; CHECK: edge.entry.loop:
; CHECK: add i64 %{{.*}}, 2
; CHECK: br i1 %{{.*}}, label %grow.0, label %grown.0
; CHECK: grow.0:
; CHECK: call ptr @realloc(
; CHECK: call ptr @realloc(
; CHECK-LABEL: define void @grad.release()
; CHECK: call void @enzpy.release(ptr @grad.workspace, i64 3, i64 2)

; FRESH-LABEL: define void @grad(
; FRESH-NOT: @enzpy.take
; FRESH: finish:
; FRESH: call void @free(
; FRESH: call void @free(
; FRESH: grow.0:
; FRESH: call ptr @realloc(
