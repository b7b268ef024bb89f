; runtime/trsm_sized.ll: A small triangular solve in own loops; above 16^3 work the host's trsm, or its trsv per
; right-hand side while its BLAS runs several threads (up to 256^3); per float type.
; RUN: %opt -p runtime --helpers enzpy.trsm_sized.f64,enzpy.trsm_sized.f32 %s | %filecheck %s
; RUN: %opt -p runtime --helpers enzpy.trsm_sized.f64,enzpy.trsm_sized.f32 %s | %filecheck %s --check-prefix=DECL

; CHECK-LABEL: define internal void @enzpy.trsm_sized.f64(i8 %side, i8 %uplo, i8 %trans, i8 %diag, i64 %m, i64 %n, double %alpha, ptr %a, i64 %lda, ptr %b, i64 %ldb) {
; CHECK: %small = icmp sle i64 %work, 4096
; CHECK: %large = icmp sgt i64 %work, 16777216
; CHECK: %threads.fn = load ptr, ptr @enzpy.host.blas_threads.f64
; CHECK: %threads.n = call i32 %threads.fn()
; CHECK: %threads.many = icmp sgt i32 %threads.n, 1
; CHECK: call void @enzpy.trsm.f64(i8 %side, i8 %uplo, i8 %trans, i8 %diag, i64 %m, i64 %n, double %alpha, ptr %a, i64 %lda, ptr %b, i64 %ldb)
; CHECK: %vtrans = select i1 %left, i8 %trans, i8 %vtr
; CHECK: call void @enzpy.trsv.f64(i8 %uplo, i8 %vtrans, i8 %diag, i64 %k, ptr %a, i64 %lda, ptr %v.p, i64 %vinc)
; CHECK: %bi.p = getelementptr double, ptr %b, i64 %bi.o
; CHECK: %bi = load double, ptr %bi.p
; CHECK: %s0 = fmul double %alpha, %bi
; CHECK: %s = phi double [ %s0, %row ], [ %s1, %inner ]
; CHECK: %t.p = getelementptr double, ptr %a, i64 %t.o
; CHECK: %t = load double, ptr %t.p
; CHECK: %x.p = getelementptr double, ptr %b, i64 %x.o
; CHECK: %x = load double, ptr %x.p
; CHECK: %tx = fmul double %t, %x
; CHECK: %s1 = fsub double %s, %tx
; CHECK: %sum = phi double [ %s0, %row ], [ %s1, %inner ]
; CHECK: %d.p = getelementptr double, ptr %a, i64 %d.o
; CHECK: %d = load double, ptr %d.p
; CHECK: %q = fdiv double %sum, %d
; CHECK: %xi = select i1 %unit, double %sum, double %q
; CHECK: store double %xi, ptr %bi.p
; CHECK-LABEL: define internal void @enzpy.trsm_sized.f32(i8 %side, i8 %uplo, i8 %trans, i8 %diag, i64 %m, i64 %n, float %alpha, ptr %a, i64 %lda, ptr %b, i64 %ldb) {
; CHECK: %small = icmp sle i64 %work, 4096
; CHECK: %large = icmp sgt i64 %work, 16777216
; CHECK: %threads.fn = load ptr, ptr @enzpy.host.blas_threads.f32
; CHECK: %threads.n = call i32 %threads.fn()
; CHECK: %threads.many = icmp sgt i32 %threads.n, 1
; CHECK: call void @enzpy.trsm.f32(i8 %side, i8 %uplo, i8 %trans, i8 %diag, i64 %m, i64 %n, float %alpha, ptr %a, i64 %lda, ptr %b, i64 %ldb)
; CHECK: %vtrans = select i1 %left, i8 %trans, i8 %vtr
; CHECK: call void @enzpy.trsv.f32(i8 %uplo, i8 %vtrans, i8 %diag, i64 %k, ptr %a, i64 %lda, ptr %v.p, i64 %vinc)
; CHECK: %bi.p = getelementptr float, ptr %b, i64 %bi.o
; CHECK: %bi = load float, ptr %bi.p
; CHECK: %s0 = fmul float %alpha, %bi
; CHECK: %s = phi float [ %s0, %row ], [ %s1, %inner ]
; CHECK: %t.p = getelementptr float, ptr %a, i64 %t.o
; CHECK: %t = load float, ptr %t.p
; CHECK: %x.p = getelementptr float, ptr %b, i64 %x.o
; CHECK: %x = load float, ptr %x.p
; CHECK: %tx = fmul float %t, %x
; CHECK: %s1 = fsub float %s, %tx
; CHECK: %sum = phi float [ %s0, %row ], [ %s1, %inner ]
; CHECK: %d.p = getelementptr float, ptr %a, i64 %d.o
; CHECK: %d = load float, ptr %d.p
; CHECK: %q = fdiv float %sum, %d
; CHECK: %xi = select i1 %unit, float %sum, float %q
; CHECK: store float %xi, ptr %bi.p

; DECL-DAG: declare void @enzpy.host.dtrsm(ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr)
; DECL-DAG: declare void @enzpy.host.strsm(ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr)
; DECL-DAG: declare void @enzpy.host.dtrsv(ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr)
; DECL-DAG: @enzpy.host.blas_threads.f64 = external global ptr
