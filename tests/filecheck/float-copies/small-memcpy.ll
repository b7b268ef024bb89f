; A one-element memcpy lowered to an i64 load and store: the slot %a holds a double, so the copy
; becomes a double copy. An i64 copy out of a slot that also holds integers (%h: a header) keeps
; its integer type, and so does an integer load that is computed with.
; RUN: %opt -p float-copies --fn f %s | %filecheck %s

define i64 @f(ptr %a, ptr %b, ptr %h, ptr %c, double %v) {
entry:
  store double %v, ptr %a, align 8
  %bits = load i64, ptr %a, align 1
  store i64 %bits, ptr %b, align 1
  store i64 3, ptr %h, align 8
  store double %v, ptr %h, align 8
  %hb = load i64, ptr %h, align 1
  store i64 %hb, ptr %c, align 1
  %cq = getelementptr i8, ptr %c, i64 8
  store double %v, ptr %cq, align 8
  %n = load i64, ptr %cq, align 8
  %m = add i64 %n, 1
  ret i64 %m
}

; CHECK-LABEL: define i64 @f(
; CHECK: %bits = load double, ptr %a, align 1
; CHECK-NEXT: store double %bits, ptr %b, align 1
; CHECK: %hb = load i64, ptr %h, align 1
; CHECK-NEXT: store i64 %hb, ptr %c, align 1
; CHECK: %n = load i64, ptr %cq, align 8
