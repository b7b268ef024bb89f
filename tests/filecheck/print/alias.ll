; Alias and mod/ref: which write may change what a load read, after it read it. Without the
; noalias promise the store into %y may overwrite %x; with it, x[i] is unchanged (the reverse
; sweep loads it again). A store in a later iteration counts: the loop's back edge reaches it.
; RUN: %opt -p print --what alias %s | %filecheck %s
; RUN: %opt -p print --what alias --noalias %s | %filecheck %s --check-prefix=NOALIAS

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  %buf = alloca [8 x double], align 8
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %pb = getelementptr double, ptr %buf, i64 %i
  store double %a, ptr %pb, align 8
  %b = load double, ptr %pb, align 8
  %py = getelementptr double, ptr %y, i64 %i
  %c = load double, ptr %py, align 8
  %m = fmul double %b, %c
  store double %m, ptr %py, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

; CHECK: write 0: store double %a, ptr %pb, align 8 -> %buf
; CHECK-NEXT: write 1: store double %m, ptr %py, align 8 -> %y
; CHECK-NEXT: load %a: overwritten by write 1
; CHECK-NEXT: load %b: overwritten by write 0
; CHECK-NEXT: load %c: overwritten by write 1

; NOALIAS: write 0: store double %a, ptr %pb, align 8 -> %buf
; NOALIAS-NEXT: write 1: store double %m, ptr %py, align 8 -> %y
; NOALIAS-NEXT: load %a: unchanged
; NOALIAS-NEXT: load %b: overwritten by write 0
; NOALIAS-NEXT: load %c: overwritten by write 1
