; runtime/parfor_iterations.ll: A parallel loop's iteration count from its schedule.
; RUN: %opt -p runtime --helpers enzpy.parfor.iterations %s | %filecheck %s

; CHECK-LABEL: define internal i64 @enzpy.parfor.iterations(ptr %sched, i64 %n, i64 %step) {
