; A stack struct holding x's data pointer (field 0) and a length (field 1), as Numba keeps an
; array: the length read back is not x's value, so indexing by it decides nothing; a value
; loaded through the pointer read back is, so indexing by it is a decision; a dependent value
; stored through that pointer stays in x's memory (no unknown roots), so what is read from y
; (Const) is not x's value either.
; RUN: %opt -p print --what decisions --activity dup,const,const %s | %filecheck %s

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  %s = alloca { ptr, i64 }, align 8
  %len = getelementptr inbounds i8, ptr %s, i64 8
  store ptr %x, ptr %s, align 8
  store i64 %n, ptr %len, align 8
  %d = load ptr, ptr %s, align 8
  %m = load i64, ptr %len, align 8
  %p = getelementptr double, ptr %y, i64 %m
  %v = load double, ptr %d, align 8
  store double %v, ptr %d, align 8
  %k = fptosi double %v to i64
  %q = getelementptr double, ptr %y, i64 %k
  store double 1.0, ptr %q, align 8
  %w = load i64, ptr %y, align 8
  %r = getelementptr double, ptr %p, i64 %w
  store double 0.0, ptr %r, align 8
  ret void
}

; CHECK: decision: %q = getelementptr double, ptr %y, i64 %k  ; an address computed from the inputs' values
; CHECK-NOT: decision
