; enzyme_py/bridge/rule_calls.ll: a specialisation of an @njit function with a custom rule calls its compiled code, returns its status when it raised, and passes its result through the ruled cfunc; an inactive one forwards its arguments.
; RUN: %runtime %S/../../../enzyme_py/bridge/rule_calls.ll:trampoline NAME=f 'PARAMS=, double %a0, i64 %a1' COMPILED=slot.c RESULT=piece:ruled SLOT=slot.r RET=double 'RULE_ARGS=double %a0, i64 %a1, ' Y=%y | %filecheck %s
; RUN: %runtime %S/../../../enzyme_py/bridge/rule_calls.ll:trampoline NAME=f PARAMS= COMPILED=slot.c RESULT=piece:plain RET=float Y=%y0 | %filecheck %s --check-prefix=PLAIN
; RUN: %runtime %S/../../../enzyme_py/bridge/rule_calls.ll:forwarding 'HEADER=define i32 @g(ptr %r, ptr %e, double %x) {' COMPILED=slot.c 'ARGS=ptr %r, ptr %e, double %x' | %filecheck %s --check-prefix=FORWARD
; RUN: %runtime %S/../../../enzyme_py/bridge/rule_calls.ll:slot SLOT=slot.c ADDRESS=4660 | %filecheck %s --check-prefix=SLOT

; CHECK-LABEL: define linkonce_odr i32 @"f"(ptr noalias %retptr, ptr noalias %excinfo, double %a0, i64 %a1) {
; CHECK: %fn = load ptr, ptr @"slot.c"
; CHECK: %st = call i32 %fn(ptr %retptr, ptr %excinfo, double %a0, i64 %a1)
; CHECK: %ok = icmp eq i32 %st, 0
; CHECK: br i1 %ok, label %done, label %raised
; CHECK: raised:
; CHECK-NEXT: ret i32 %st
; CHECK: done:
; CHECK-NEXT: %y0 = load double, ptr %retptr
; CHECK-NEXT: %rule = load ptr, ptr @"slot.r"
; CHECK-NEXT: %y = call double %rule(double %a0, i64 %a1, double %y0)
; CHECK-NEXT: store double %y, ptr %retptr
; CHECK-NEXT: ret i32 0

; PLAIN-LABEL: define linkonce_odr i32 @"f"(ptr noalias %retptr, ptr noalias %excinfo) {
; PLAIN: %st = call i32 %fn(ptr %retptr, ptr %excinfo)
; PLAIN: done:
; PLAIN-NEXT: %y0 = load float, ptr %retptr
; PLAIN-NEXT: store float %y0, ptr %retptr
; PLAIN-NEXT: ret i32 0

; FORWARD: define i32 @g(ptr %r, ptr %e, double %x) {
; FORWARD-NEXT: entry.forward:
; FORWARD-NEXT: %fn.forward = load ptr, ptr @"slot.c"
; FORWARD-NEXT: %st.forward = call i32 %fn.forward(ptr %r, ptr %e, double %x)
; FORWARD-NEXT: ret i32 %st.forward

; SLOT: @"slot.c" = linkonce global ptr inttoptr (i64 4660 to ptr)
