; getrs's arguments: below SMALL_WORK (n^2 * nrhs), P^T b then the two triangular solves ('N'),
; or the solves with the transposed factors then P b ('T'), in own loops; above, the host's
; getrs (OpenBLAS's getrs 'N' with nrhs > 1 threads at any size: 8 ms for 8 x 8 on a busy
; machine, against 2 us for 'T')
; TYPE: the float type, SUFFIX its name.

define internal void @enzpy.getrs_sized.{{SUFFIX}}(i8 %trans, i64 %n, i64 %nrhs, ptr %a, i64 %lda, ptr %ipiv, ptr %b, i64 %ldb) {
entry:
  %nn = mul i64 %n, %n
  %work = mul i64 %nn, %nrhs
  %small = icmp sle i64 %work, {{WORK}}
  br i1 %small, label %own, label %library
library:
  call void @enzpy.getrs.{{SUFFIX}}(i8 %trans, i64 %n, i64 %nrhs, ptr %a, i64 %lda, ptr %ipiv, ptr %b, i64 %ldb)
  ret void
own:
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
