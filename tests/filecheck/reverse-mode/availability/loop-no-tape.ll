; y[i] = x[i] * x[i] over disjoint arrays: the index is rebuilt from the loop counter and x[i]
; is loaded again, so the tape stays empty.
; RUN: %opt -p reverse-mode --fn f --activity dup,dup,const --noalias %s | %filecheck %s
; RUN: %opt -p reverse-mode --fn f --activity dup,dup,const %s | %filecheck %s --check-prefix=ALIAS

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

; CHECK-LABEL: define void @grad
; CHECK-NOT: realloc
; CHECK: ret void

; Without the noalias promise, y may overlap x: x[i] is cached.
; ALIAS-LABEL: define void @grad
; ALIAS: call ptr @realloc
