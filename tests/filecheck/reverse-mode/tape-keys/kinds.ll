; What each tape entry holds (transforms/reverse/tape/tape_keys.py), as explain reads it: the values of
; one loop iteration (the carried accumulator, a division), the branch control took into the
; inner loop (its reverse retraces it: `from`), and the inner loop's counter where each of its
; runs starts (`start`), each labelled with the loop that indexes it.
; RUN: %opt -p print --what availability --activity dup,dup,const --noalias %s | %filecheck %s

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i1, %outer.latch ]
  %acc = phi double [ 1.0, %entry ], [ %acc2, %outer.latch ]
  %px = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %px, align 8
  %pos = fcmp ogt double %a, 0.0
  br i1 %pos, label %then, label %else
then:
  %m = fdiv double %acc, %a
  br label %inner
else:
  %m2 = fmul double %acc, %a
  br label %inner
inner:
  %j = phi i64 [ 0, %then ], [ 0, %else ], [ %j1, %inner ]
  %v = phi double [ %m, %then ], [ %m2, %else ], [ %v1, %inner ]
  %v1 = fdiv double %v, %a
  %j1 = add i64 %j, 1
  %jm = icmp slt i64 %j1, %i
  br i1 %jm, label %inner, label %outer.latch
outer.latch:
  %acc2 = fadd double %v1, 0.0
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %outer, label %exit
exit:
  store double %acc2, ptr %y, align 8
  ret void
}

; CHECK: tape %acc (loop 0): it is carried from one loop iteration to the next
; CHECK: tape %m (loop 0): a division or math call: reading it back costs less than computing it again
; CHECK: tape %v (loop 1): it is carried from one loop iteration to the next
; CHECK: tape %v1 (loop 1): a division or math call: reading it back costs less than computing it again
; CHECK: tape from (loop 1): the reverse sweep retraces the branch taken here
; CHECK: tape start (loop 0): the reverse sweep runs this loop backwards from its counter
