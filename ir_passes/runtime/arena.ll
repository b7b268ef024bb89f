; The arena: copies of inputs for the reverse sweep, one after another in one buffer (*slot, of
; capacity *capp, *usedp bytes in use). Push copies size bytes from src and returns their offset
; (16-byte aligned); growing keeps the contents. The buffer is parked with the tape between calls,
; so a repeat call with the same shapes allocates nothing.

define internal i64 @enzpy.arena_push(ptr %slot, ptr %capp, ptr %usedp, ptr %src, i64 %size) {
entry:
  %used = load i64, ptr %usedp
  %cap = load i64, ptr %capp
  %base = load ptr, ptr %slot
  %padded = add i64 %size, 15
  %rounded = and i64 %padded, -16
  %need = add i64 %used, %rounded
  %small = icmp ult i64 %cap, %need
  br i1 %small, label %grow, label %copy
grow:
  %dbl = shl i64 %cap, 1
  %big = icmp ugt i64 %dbl, %need
  %newcap = select i1 %big, i64 %dbl, i64 %need
  %new = call ptr @malloc(i64 %newcap)
  call void @llvm.memcpy.p0.p0.i64(ptr %new, ptr %base, i64 %used, i1 false)
  %had = icmp ne ptr %base, null
  br i1 %had, label %release, label %grown
release:
  call void @free(ptr %base)
  br label %grown
grown:
  store ptr %new, ptr %slot
  store i64 %newcap, ptr %capp
  br label %copy
copy:
  %b = phi ptr [ %base, %entry ], [ %new, %grown ]
  %dst = getelementptr i8, ptr %b, i64 %used
  store i64 %need, ptr %usedp
  %blank = icmp eq ptr %src, null
  br i1 %blank, label %done, label %fill
fill:
  call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %src, i64 %size, i1 false)
  br label %done
done:
  ret i64 %used
}

declare ptr @malloc(i64)
declare void @free(ptr)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
