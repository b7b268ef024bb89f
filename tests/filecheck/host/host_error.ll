; enzyme_py/bridge/host_error.ll: the host's error report (a Python RuntimeError under the GIL) parses and prints as written.
; RUN: %opt %S/../../../enzyme_py/bridge/host_error.ll | %filecheck %s

; CHECK-LABEL: define internal void @enzpy.host_error(ptr %message) {
; CHECK: %gil = call i32 @PyGILState_Ensure()
; CHECK: %type = load ptr, ptr @PyExc_RuntimeError
; CHECK: call void @PyErr_SetString(ptr %type, ptr %message)
; CHECK: call void @PyGILState_Release(i32 %gil)
; CHECK-LABEL: define internal i1 @enzpy.host_error_pending() {
; CHECK: %error = call ptr @PyErr_Occurred()
; CHECK: %set = icmp ne ptr %error, null
; CHECK: ret i1 %set
