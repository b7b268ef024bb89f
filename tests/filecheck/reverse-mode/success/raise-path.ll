; A raise path that merged its return with the success path (status 1 and 0 through one phi):
; split-returns gives it its own `ret i32 1`, so it reaches no success and gets no adjoint code.
; The forward sweep still runs it (it stores the message and returns 1); the reverse sweep has
; the adjoint of the success path's square only; the raise block's reverse is a stub.
; RUN: %opt -p reverse-mode --fn f --activity dup,const --success-codes 0 %s | %filecheck %s

define i32 @f(ptr %x, i64 %n) {
entry:
  %bad = icmp sgt i64 %n, 4
  br i1 %bad, label %raise, label %body
raise:
  %u = load double, ptr %x, align 8
  %t = fmul double %u, 3.0
  store double %t, ptr %x, align 8
  br label %common.ret
body:
  %v = load double, ptr %x, align 8
  %w = fmul double %v, %v
  store double %w, ptr %x, align 8
  br label %common.ret
common.ret:
  %s = phi i32 [ 1, %raise ], [ 0, %body ]
  ret i32 %s
}
; CHECK-LABEL: define i32 @grad(
; CHECK: fwd.raise:
; CHECK-NEXT: %u = load double
; CHECK-NEXT: %t = fmul double %u, 3.0
; CHECK: rev.raise:
; CHECK-NEXT: unreachable
; CHECK: error:
; CHECK-NEXT: %status = phi i32 [ 1, %fwd.raise ]
; CHECK-NEXT: ret i32 %status
