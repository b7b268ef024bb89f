; simplifycfg merged the returns: the raise path (status 1) and the success path (status 0)
; meet in one phi + ret block. Each unconditional predecessor gets its own ret of its incoming
; value, with its own location; the merged block goes once no edge reaches it. A block whose
; conditional branch reaches a merged return keeps its edge (the block stays, with that phi
; entry alone).
; RUN: %opt -p split-returns --fn f %s | %filecheck %s
; RUN: %opt -p split-returns --fn g %s | %filecheck %s --check-prefix=COND

define i32 @f(ptr %x, i64 %n) {
entry:
  %bad = icmp sgt i64 %n, 4
  br i1 %bad, label %raise, label %body
raise:
  store i64 %n, ptr %x, align 8
  br label %common.ret, !dbg !7
body:
  %v = load double, ptr %x, align 8
  %w = fmul double %v, %v
  store double %w, ptr %x, align 8
  br label %common.ret, !dbg !8
common.ret:
  %s = phi i32 [ 1, %raise ], [ 0, %body ]
  ret i32 %s, !dbg !9
}
; CHECK-LABEL: define i32 @f(
; CHECK: raise:
; CHECK-NEXT: store i64 %n
; CHECK-NEXT: ret i32 1, !dbg !7
; CHECK: body:
; CHECK: store double %w
; CHECK-NEXT: ret i32 0, !dbg !8
; CHECK-NOT: common.ret
; CHECK: }

define i32 @g(ptr %x, i64 %n) {
entry:
  %bad = icmp sgt i64 %n, 4
  br i1 %bad, label %common.ret, label %body
body:
  store double 1.0, ptr %x, align 8
  br label %common.ret
common.ret:
  %s = phi i32 [ 1, %entry ], [ 0, %body ]
  ret i32 %s
}
; COND-LABEL: define i32 @g(
; COND: br i1 %bad, label %common.ret, label %body
; COND: body:
; COND-NEXT: store double
; COND-NEXT: ret i32 0
; COND: common.ret:
; COND-NEXT: %s = phi i32 [ 1, %entry ]
; COND-NEXT: ret i32 %s

!llvm.dbg.cu = !{}
!7 = !DILocation(line: 3, column: 1, scope: !10)
!8 = !DILocation(line: 5, column: 1, scope: !10)
!9 = !DILocation(line: 6, column: 1, scope: !10)
!10 = distinct !DISubprogram(name: "f", scope: null, spFlags: DISPFlagDefinition, unit: null)
