; `enzpy.ckpt.fail` with a host's error report (rules/convention.py): the message, a C string of
; LENGTH bytes written as BYTES (\XX escapes), goes to the host's @REPORT (checkpoint/schedule.py).

@enzpy.ckpt.message = private unnamed_addr constant [{{LENGTH}} x i8] c"{{BYTES}}"
define internal void @enzpy.ckpt.fail() {
entry:
  call void @{{REPORT}}(ptr @enzpy.ckpt.message)
  ret void
}
declare void @{{REPORT}}(ptr)
