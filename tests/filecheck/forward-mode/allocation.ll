; A malloc'd buffer that receives varying data gets a zeroed shadow of the same size, grown by
; realloc beside the primal and freed where the primal frees it (unless it is the primal memory
; itself: a pointer without a shadow stored in shadowed memory is its own shadow).
; RUN: %opt -p forward-mode --fn f --activity dup,const %s | %filecheck %s

declare ptr @malloc(i64)
declare ptr @realloc(ptr, i64)
declare void @free(ptr)

define void @f(ptr %x, i64 %n) {
entry:
  %buf = call ptr @malloc(i64 8)
  %a = load double, ptr %x, align 8
  %sq = fmul double %a, %a
  store double %sq, ptr %buf, align 8
  %big = call ptr @realloc(ptr %buf, i64 16)
  %b = load double, ptr %big, align 8
  call void @free(ptr %big)
  store double %b, ptr %x, align 8
  ret void
}

; CHECK-LABEL: define void @fwd(ptr %x, i64 %n, ptr %x.shadow)
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %buf = call ptr @malloc(i64 8)
; CHECK-NEXT:    %buf.shadow = call ptr @malloc(i64 8)
; CHECK-NEXT:    call void @llvm.memset.p0.i64(ptr %buf.shadow, i8 0, i64 8, i1 false)
; CHECK:         store double %sq, ptr %buf, align 8
; CHECK-NEXT:    store double {{%.*}}, ptr %buf.shadow, align 8
; CHECK-NEXT:    %big = call ptr @realloc(ptr %buf, i64 16)
; CHECK-NEXT:    %big.shadow = call ptr @realloc(ptr %buf.shadow, i64 16)
; CHECK-NEXT:    %b = load double, ptr %big, align 8
; CHECK-NEXT:    %b.t = load double, ptr %big.shadow, align 8
; CHECK-NEXT:    call void @free(ptr %big)
; CHECK-NEXT:    [[SAME:%.*]] = icmp eq ptr %big.shadow, %big
; CHECK-NEXT:    [[S:%.*]] = select i1 [[SAME]], ptr null, ptr %big.shadow
; CHECK-NEXT:    call void @free(ptr [[S]])
