; The host's error report for a gradient that fails while it runs (a checkpointed loop's step
; that leaves another way when it runs again): `enzpy.host_error` sets a Python RuntimeError
; (taking the GIL; Python's error indicator is per thread) and the gradient returns Numba's status
; for "an exception is set", which the caller raises; `enzpy.host_error_pending` says whether one
; is set. bridge/nrt.py registers both with ir_passes.

define internal void @enzpy.host_error(ptr %message) {
entry:
  %gil = call i32 @PyGILState_Ensure()
  %type = load ptr, ptr @PyExc_RuntimeError
  call void @PyErr_SetString(ptr %type, ptr %message)
  call void @PyGILState_Release(i32 %gil)
  ret void
}

define internal i1 @enzpy.host_error_pending() {
entry:
  %gil = call i32 @PyGILState_Ensure()
  %error = call ptr @PyErr_Occurred()
  call void @PyGILState_Release(i32 %gil)
  %set = icmp ne ptr %error, null
  ret i1 %set
}
@PyExc_RuntimeError = external global ptr
declare ptr @PyErr_Occurred()
declare i32 @PyGILState_Ensure()
declare void @PyErr_SetString(ptr, ptr)
declare void @PyGILState_Release(i32)
