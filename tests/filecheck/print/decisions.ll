; Decisions on the inputs' values: a sparsity pattern found by one run holds for other inputs
; only without them. %c branches on x's value, %k indexes by it, %n (a Const parameter) is fine,
; and so is a memset of memory holding values of x (it reads none of them).
; RUN: %opt -p print --what decisions --activity dup,dup,const %s | %filecheck %s

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  %a = load double, ptr %x, align 8
  %c = fcmp ogt double %a, 0.0
  br i1 %c, label %then, label %join
then:
  %k = fptosi double %a to i64
  %p = getelementptr double, ptr %x, i64 %k
  %b = load double, ptr %p, align 8
  br label %join
join:
  %r = phi double [ %b, %then ], [ %a, %entry ]
  %q = getelementptr double, ptr %y, i64 %n
  store double %r, ptr %q, align 8
  call void @llvm.memset.p0.i64(ptr %y, i8 0, i64 8, i1 false)
  ret void
}

declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; CHECK: decision: br i1 %c, label %then, label %join  ; a branch on the inputs' values
; CHECK-NEXT: decision: %p = getelementptr double, ptr %x, i64 %k  ; an address computed from the inputs' values
; CHECK-NOT: decision
