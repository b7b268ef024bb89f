; runtime/getrs_sized.ll: An LU solve as getrs does it (row swaps and two trsm_sized solves) at every size; the host's getrs never.
; RUN: %opt -p runtime --helpers enzpy.getrs_sized.f32 %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.getrs_sized.f32 %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal void @enzpy.getrs_sized.f32(i8 %trans, i64 %n, i64 %nrhs, ptr %a, i64 %lda, ptr %ipiv, ptr %b, i64 %ldb) {
; CHECK-NOT: @enzpy.getrs.f32
; CHECK: call void @enzpy.swap_rows.f32(i64 %n, i64 %nrhs, ptr %ipiv, ptr %b, i64 %ldb, i64 0)
; CHECK: call void @enzpy.trsm_sized.f32(i8 76, i8 76, i8 78, i8 85, i64 %n, i64 %nrhs, float 1.0, ptr %a, i64 %lda, ptr %b, i64 %ldb)
; CHECK: call void @enzpy.trsm_sized.f32(i8 76, i8 85, i8 78, i8 78, i64 %n, i64 %nrhs, float 1.0, ptr %a, i64 %lda, ptr %b, i64 %ldb)
; CHECK: call void @enzpy.trsm_sized.f32(i8 76, i8 85, i8 84, i8 78, i64 %n, i64 %nrhs, float 1.0, ptr %a, i64 %lda, ptr %b, i64 %ldb)
; CHECK: call void @enzpy.trsm_sized.f32(i8 76, i8 76, i8 84, i8 85, i64 %n, i64 %nrhs, float 1.0, ptr %a, i64 %lda, ptr %b, i64 %ldb)
; CHECK: call void @enzpy.swap_rows.f32(i64 %n, i64 %nrhs, ptr %ipiv, ptr %b, i64 %ldb, i64 1)

; DECL-DAG: declare void @enzpy.host.strsm(ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr)
; DECL-DAG: declare void @enzpy.host.strsv(ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr)
; DECL-DAG: @enzpy.host.blas_threads.f32 = external global ptr
; DECL-NOT: @enzpy.host.sgetrs
