; The gradient the driver adds (transforms/reverse/sweeps/driver.py), named by --out: the primal's
; parameters, then a shadow for each dup pointer and an out pointer for each active scalar, in
; parameter order. Its blocks: alloca (adjoint slots, the frame), state, the forward sweep
; (fwd.*), the reverse sweep (rev.*) and finish, where an active scalar's derivative is added
; into its out pointer. x may alias out (no --noalias): the load is taped before the store.
; RUN: %opt -p reverse-mode --activity active,dup,const,dup --out df %s | %filecheck %s

define void @f(double %a, ptr %x, i64 %n, ptr %out) {
entry:
  %v = load double, ptr %x, align 8
  %m = fmul double %a, %v
  store double %m, ptr %out, align 8
  ret void
}

; CHECK-LABEL: define void @df(double %a, ptr %x, i64 %n, ptr %out, ptr %x.shadow, ptr %out.shadow, ptr %a.dout) {
; CHECK-NEXT: alloca:
; CHECK-NEXT: %frame = alloca [8 x i8], align 16
; CHECK: br label %state
; CHECK: state:
; CHECK-NEXT: br label %fwd.entry
; CHECK: fwd.entry:
; CHECK-NEXT: %v = load double, ptr %x, align 8
; CHECK-NEXT: store double %v, ptr %frame
; CHECK-NEXT: %m = fmul double %a, %v
; CHECK-NEXT: store double %m, ptr %out, align 8
; CHECK-NEXT: br label %rev.entry
; CHECK: rev.entry:
; CHECK: load double, ptr %out.shadow
; CHECK: store double {{.*}}, ptr %x.shadow
; CHECK: br label %finish
; CHECK: finish:
; CHECK-NEXT: [[DA:%t\.[0-9]+]] = load double, ptr %d.a
; CHECK-NEXT: [[OLD:%t\.[0-9]+]] = load double, ptr %a.dout
; CHECK-NEXT: [[SUM:%t\.[0-9]+]] = fadd reassoc nsz double [[OLD]], [[DA]]
; CHECK-NEXT: store double [[SUM]], ptr %a.dout
; CHECK-NEXT: ret void
