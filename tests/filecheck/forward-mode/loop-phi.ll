; s = sum x[i] * x[i]: the loop-carried sum gets a tangent phi; no tape, no second sweep.
; RUN: %opt -p forward-mode --fn f --activity dup,dup,const %s | %filecheck %s

define void @f(ptr %x, ptr %out, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %m = fmul double %a, %a
  %s1 = fadd double %s, %m
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  store double %s1, ptr %out, align 8
  ret void
}

; CHECK-LABEL: define void @fwd(ptr %x, ptr %out, i64 %n, ptr %x.shadow, ptr %out.shadow)
; CHECK:       loop:
; CHECK:         %s = phi double [ 0.0, %entry ], [ %s1, %loop ]
; CHECK-NEXT:    %s.t = phi double [ 0x0000000000000000, %entry ], [ [[DS1:%.*]], %loop ]
; CHECK-NEXT:    %px = getelementptr double, ptr %x, i64 %i
; CHECK-NEXT:    %px.shadow = getelementptr double, ptr %x.shadow, i64 %i
; CHECK-NEXT:    %a = load double, ptr %px, align 8
; CHECK-NEXT:    %a.t = load double, ptr %px.shadow, align 8
; CHECK-NEXT:    %m = fmul double %a, %a
; CHECK-NEXT:    [[P1:%.*]] = fmul double %a.t, %a
; CHECK-NEXT:    [[P2:%.*]] = fmul double %a.t, %a
; CHECK-NEXT:    [[DM:%.*]] = fadd double [[P1]], [[P2]]
; CHECK-NEXT:    %s1 = fadd double %s, %m
; CHECK-NEXT:    [[DS1]] = fadd double %s.t, [[DM]]
; CHECK:       exit:
; CHECK-NEXT:    store double %s1, ptr %out, align 8
; CHECK-NEXT:    store double [[DS1]], ptr %out.shadow, align 8
; CHECK-NEXT:    ret void
; CHECK-NOT:   realloc
