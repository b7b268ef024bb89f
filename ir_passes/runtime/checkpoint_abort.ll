; `enzpy.ckpt.fail` without a host's error report: the message (WRITTEN bytes, stored as WORDS,
; the COUNT 8-byte words WORDS lists) goes to stderr, then abort (checkpoint/schedule.py).

define internal void @enzpy.ckpt.fail() {
entry:
  %m = alloca [{{COUNT}} x i64], align 8
  store [{{COUNT}} x i64] [{{WORDS}}], ptr %m
  %w = call i64 @write(i32 2, ptr %m, i64 {{WRITTEN}})
  call void @abort()
  unreachable
}
declare i64 @write(i32, ptr, i64)
declare void @abort()
