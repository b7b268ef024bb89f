; Success codes (transforms/reverse/calls/success.py, rules/convention.py): with --success-codes 0 the
; return of -1 is an error; its path gets no adjoint code (the gradient returns the status at
; once, shadows untouched) and only the path to `ret i32 0` is reversed. Without the option
; every return is a success and both paths are reversed.
; RUN: %opt -p reverse-mode --activity dup,dup,const --noalias --success-codes 0 %s | %filecheck %s
; RUN: %opt -p reverse-mode --activity dup,dup,const --noalias %s | %filecheck %s --check-prefix=ALL

define i32 @f(ptr noalias %x, ptr noalias %y, i64 %n) {
entry:
  %bad = icmp slt i64 %n, 1
  br i1 %bad, label %fail, label %work
work:
  %a = load double, ptr %x, align 8
  %s = call double @llvm.exp.f64(double %a)
  store double %s, ptr %y, align 8
  ret i32 0
fail:
  store double 0.0, ptr %y, align 8
  ret i32 -1
}
declare double @llvm.exp.f64(double)

; CHECK-LABEL: define i32 @grad(
; CHECK: fwd.work:
; CHECK: br label %rev.work
; CHECK: fwd.fail:
; CHECK-NEXT: store double 0.0, ptr %y, align 8
; CHECK-NEXT: store i32 -1, ptr %frame
; CHECK-NEXT: br label %error
; CHECK: rev.work:
; CHECK: store double %{{.*}}, ptr %x.shadow
; CHECK: rev.fail:
; CHECK-NEXT: unreachable
; CHECK: error:
; CHECK-NEXT: %status = phi i32 [ -1, %fwd.fail ]
; CHECK-NEXT: ret i32 %status

; ALL-LABEL: define i32 @grad(
; ALL-NOT: error:
; ALL: rev.fail:
; ALL-NEXT: store double 0x0000000000000000, ptr %y.shadow
; ALL: ret i32
