; A function with three handle parameters. %a is only retained and released: its calls go, and
; the phi that mixes it with a handle of the function's own (fed only to a release) takes null
; on %a's edge. %b is stored into memory: its retain and release stay. The function's own
; handle %t keeps its retain and release (its last release frees it).
; RUN: %opt -p drop-parameter-refcounts --fn f --refcounts rc.retain,rc.release %s | %filecheck %s

declare void @rc.retain(ptr)
declare void @rc.release(ptr)
declare ptr @rc.alloc(i64)

define void @f(ptr %a, ptr %b, ptr %out, i1 %c) {
entry:
  call void @rc.retain(ptr %a)
  call void @rc.retain(ptr %b)
  store ptr %b, ptr %out
  %t = call ptr @rc.alloc(i64 8)
  call void @rc.retain(ptr %t)
  br i1 %c, label %left, label %right
left:
  br label %join
right:
  call void @rc.release(ptr %t)
  br label %join
join:
  %h = phi ptr [ %a, %left ], [ %t, %right ]
  call void @rc.release(ptr %h)
  call void @rc.release(ptr %b)
  ret void
}

; CHECK-LABEL: define void @f(
; CHECK-NEXT: entry:
; CHECK-NEXT: call void @rc.retain(ptr %b)
; CHECK-NEXT: store ptr %b, ptr %out
; CHECK-NEXT: %t = call ptr @rc.alloc(i64 8)
; CHECK-NEXT: call void @rc.retain(ptr %t)
; CHECK: right:
; CHECK-NEXT: call void @rc.release(ptr %t)
; CHECK: join:
; CHECK-NEXT: %h = phi ptr [ null, %left ], [ %t, %right ]
; CHECK-NEXT: call void @rc.release(ptr %h)
; CHECK-NEXT: call void @rc.release(ptr %b)
; CHECK-NEXT: ret void
