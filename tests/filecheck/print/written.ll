; The parameters a function may write through (a snapshot before a rerun copies only those):
; a store through %a and a memset of %c; %b is only read, so it is not listed.
; RUN: %opt -p print --what written %s | %filecheck %s
; RUN: %opt -p print --what written --fn g %s | %filecheck %s --check-prefix=UNKNOWN

declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

define void @f(ptr %a, ptr %b, ptr %c, double %x) {
entry:
  %p = getelementptr double, ptr %a, i64 2
  %v = load double, ptr %b, align 8
  %s = fadd double %v, %x
  store double %s, ptr %p, align 8
  call void @llvm.memset.p0.i64(ptr %c, i8 0, i64 16, i1 false)
  ret void
}

; A store through a pointer loaded from memory may write anything.
define void @g(ptr %a, ptr %b) {
entry:
  %q = load ptr, ptr %b, align 8
  store double 1.0, ptr %q, align 8
  ret void
}

; CHECK: written: %a, %c
; UNKNOWN: written: unknown
