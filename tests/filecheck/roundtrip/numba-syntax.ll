; Syntax the cleaned Numba IR uses survives parse -> print.
; RUN: %opt %s | %filecheck %s

@.const.k = internal constant [2 x i8] c"k\00"

declare double @llvm.sin.f64(double)
declare void @llvm.memset.p0.i64(ptr writeonly captures(none), i8, i64, i1 immarg)

define noundef range(i32 0, 2) i32 @f(ptr noalias writeonly captures(none) %retptr, ptr %x, i64 %n) local_unnamed_addr {
entry:
  %c = icmp samesign ult i64 %n, 4
  %g = getelementptr inbounds nuw i8, ptr %x, i64 8
  %v = load double, ptr %g, align 8, !noalias !0
  %s = tail call fast double @llvm.sin.f64(double %v)
  call void @llvm.memset.p0.i64(ptr noundef nonnull align 8 dereferenceable(16) %x, i8 0, i64 16, i1 false)
  %r = atomicrmw add ptr %retptr, i64 1 monotonic, align 8
  %z = zext nneg i32 7 to i64
  %sel = select i1 %c, double %s, double 0x7FF8000000000000
  store double %sel, ptr %retptr, align 8
  ret i32 0
}

!0 = !{}

; CHECK: define noundef range(i32 0, 2) i32 @f(ptr noalias writeonly captures(none) %retptr, ptr %x, i64 %n) local_unnamed_addr {
; CHECK: icmp samesign ult i64 %n, 4
; CHECK: getelementptr inbounds nuw i8, ptr %x, i64 8
; CHECK: load double, ptr %g, align 8, !noalias !0
; CHECK: tail call fast double @llvm.sin.f64(double %v)
; CHECK: call void @llvm.memset.p0.i64(ptr noundef nonnull align 8 dereferenceable(16) %x, i8 0, i64 16, i1 false)
; CHECK: atomicrmw add ptr %retptr, i64 1 monotonic, align 8
; CHECK: zext nneg i32 7 to i64
; CHECK: select i1 %c, double %s, double 0x7FF8000000000000
