; getrs's arguments, solved as LAPACK's getrs solves them but never by the host's getrs: P^T b
; then the two triangular solves ('N'), or the solves with the transposed factors then P b
; ('T'). The interchanges run in own loops, the solves in trsm_sized (own loops below
; SMALL_WORK, the host's trsm above). OpenBLAS's getrs with nrhs > 1 starts its threads at any
; size: 8 ms for 8 x 8 and 16 ms for 32 x 32 with 256 right-hand sides on a busy machine,
; against 74 us on one thread; its trsm at these sizes costs the same with threads or without.
; TYPE: the float type, SUFFIX its name.

define internal void @enzpy.getrs_sized.{{SUFFIX}}(i8 %trans, i64 %n, i64 %nrhs, ptr %a, i64 %lda, ptr %ipiv, ptr %b, i64 %ldb) {
entry:
  %isn = icmp eq i8 %trans, 78
  br i1 %isn, label %plain, label %transposed
plain:
  call void @enzpy.swap_rows.{{SUFFIX}}(i64 %n, i64 %nrhs, ptr %ipiv, ptr %b, i64 %ldb, i64 0)
  call void @enzpy.trsm_sized.{{SUFFIX}}(i8 76, i8 76, i8 78, i8 85, i64 %n, i64 %nrhs, {{TYPE}} 1.0, ptr %a, i64 %lda, ptr %b, i64 %ldb)
  call void @enzpy.trsm_sized.{{SUFFIX}}(i8 76, i8 85, i8 78, i8 78, i64 %n, i64 %nrhs, {{TYPE}} 1.0, ptr %a, i64 %lda, ptr %b, i64 %ldb)
  ret void
transposed:
  call void @enzpy.trsm_sized.{{SUFFIX}}(i8 76, i8 85, i8 84, i8 78, i64 %n, i64 %nrhs, {{TYPE}} 1.0, ptr %a, i64 %lda, ptr %b, i64 %ldb)
  call void @enzpy.trsm_sized.{{SUFFIX}}(i8 76, i8 76, i8 84, i8 85, i64 %n, i64 %nrhs, {{TYPE}} 1.0, ptr %a, i64 %lda, ptr %b, i64 %ldb)
  call void @enzpy.swap_rows.{{SUFFIX}}(i64 %n, i64 %nrhs, ptr %ipiv, ptr %b, i64 %ldb, i64 1)
  ret void
}
