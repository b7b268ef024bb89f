; runtime/arena.ll: The arena of saved inputs: push, growing the buffer and keeping its contents.
; RUN: %opt -p runtime --helpers enzpy.arena_push %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.arena_push %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal i64 @enzpy.arena_push(ptr %slot, ptr %capp, ptr %usedp, ptr %src, i64 %size) {
; CHECK: entry:
; CHECK: %used = load i64, ptr %usedp
; CHECK: %cap = load i64, ptr %capp
; CHECK: %base = load ptr, ptr %slot
; CHECK: %padded = add i64 %size, 15
; CHECK: %rounded = and i64 %padded, -16
; CHECK: %need = add i64 %used, %rounded
; CHECK: %small = icmp ult i64 %cap, %need
; CHECK: br i1 %small, label %grow, label %copy
; CHECK: grow:
; CHECK: %dbl = shl i64 %cap, 1
; CHECK: %big = icmp ugt i64 %dbl, %need
; CHECK: %newcap = select i1 %big, i64 %dbl, i64 %need
; CHECK: %new = call ptr @malloc(i64 %newcap)
; CHECK: call void @llvm.memcpy.p0.p0.i64(ptr %new, ptr %base, i64 %used, i1 false)
; CHECK: %had = icmp ne ptr %base, null
; CHECK: br i1 %had, label %release, label %grown
; CHECK: release:
; CHECK: call void @free(ptr %base)
; CHECK: br label %grown
; CHECK: grown:
; CHECK: store ptr %new, ptr %slot
; CHECK: store i64 %newcap, ptr %capp
; CHECK: br label %copy
; CHECK: copy:
; CHECK: %b = phi ptr [ %base, %entry ], [ %new, %grown ]
; CHECK: %dst = getelementptr i8, ptr %b, i64 %used
; CHECK: store i64 %need, ptr %usedp
; CHECK: %blank = icmp eq ptr %src, null
; CHECK: br i1 %blank, label %done, label %fill
; CHECK: fill:
; CHECK: call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %src, i64 %size, i1 false)
; CHECK: br label %done
; CHECK: done:
; CHECK: ret i64 %used
; DECL-DAG: declare ptr @malloc(i64)
; DECL-DAG: declare void @free(ptr)
; DECL-DAG: declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
