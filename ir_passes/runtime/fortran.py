"""Helpers that call the host's Fortran-convention BLAS and LAPACK routines (every argument by
reference, 32-bit integers) with plain values: the triangular solve trsm and the LU solve
getrs. The routines are external symbols `enzpy.host.<d|s><routine>` that the host defines
(rules/blas.py's `register_host_routine`); an empty problem returns at once, so
the routine never sees a leading dimension of 0."""
from __future__ import annotations

import re

from .helpers import HELPERS

# b (m x n) = alpha op(a)^{-1} b (side 'L') or alpha b op(a)^{-1} ('R'); a triangular (uplo 'U'
# or 'L'), op per trans ('N' or 'T'), unit diagonal when diag is 'U'
TRSM = """
define internal void @enzpy.trsm.{S}(i8 %side, i8 %uplo, i8 %trans, i8 %diag, i64 %m, i64 %n,
    {T} %alpha, ptr %a, i64 %lda, ptr %b, i64 %ldb) {{
entry:
  %ps = alloca i8
  %pu = alloca i8
  %pt = alloca i8
  %pd = alloca i8
  %pm = alloca i32
  %pn = alloca i32
  %pal = alloca {T}
  %plda = alloca i32
  %pldb = alloca i32
  %em = icmp sle i64 %m, 0
  %en = icmp sle i64 %n, 0
  %empty = or i1 %em, %en
  br i1 %empty, label %done, label %call
call:
  store i8 %side, ptr %ps
  store i8 %uplo, ptr %pu
  store i8 %trans, ptr %pt
  store i8 %diag, ptr %pd
  %m32 = trunc i64 %m to i32
  store i32 %m32, ptr %pm
  %n32 = trunc i64 %n to i32
  store i32 %n32, ptr %pn
  store {T} %alpha, ptr %pal
  %lda32 = trunc i64 %lda to i32
  store i32 %lda32, ptr %plda
  %ldb32 = trunc i64 %ldb to i32
  store i32 %ldb32, ptr %pldb
  call void @enzpy.host.{P}trsm(ptr %ps, ptr %pu, ptr %pt, ptr %pd, ptr %pm, ptr %pn, ptr %pal,
    ptr %a, ptr %plda, ptr %b, ptr %pldb)
  br label %done
done:
  ret void
}}
declare void @enzpy.host.{P}trsm(ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr)
"""

# b (n x nrhs) = op(A)^{-1} b from A's packed LU factors a and getrf's pivots ipiv (32-bit)
GETRS = """
define internal void @enzpy.getrs.{S}(i8 %trans, i64 %n, i64 %nrhs, ptr %a, i64 %lda, ptr %ipiv, ptr %b, i64 %ldb) {{
entry:
  %pt = alloca i8
  %pn = alloca i32
  %pr = alloca i32
  %plda = alloca i32
  %pldb = alloca i32
  %info = alloca i32
  %en = icmp sle i64 %n, 0
  %er = icmp sle i64 %nrhs, 0
  %empty = or i1 %en, %er
  br i1 %empty, label %done, label %call
call:
  store i8 %trans, ptr %pt
  %n32 = trunc i64 %n to i32
  store i32 %n32, ptr %pn
  %r32 = trunc i64 %nrhs to i32
  store i32 %r32, ptr %pr
  %lda32 = trunc i64 %lda to i32
  store i32 %lda32, ptr %plda
  %ldb32 = trunc i64 %ldb to i32
  store i32 %ldb32, ptr %pldb
  call void @enzpy.host.{P}getrs(ptr %pt, ptr %pn, ptr %pr, ptr %a, ptr %plda, ptr %ipiv, ptr %b, ptr %pldb, ptr %info)
  br label %done
done:
  ret void
}}
declare void @enzpy.host.{P}getrs(ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr)
"""

ROUTINES = {"trsm": TRSM, "getrs": GETRS}
for _name, _text in ROUTINES.items():
    for _s, _t, _p in (("f64", "double", "d"), ("f32", "float", "s")):
        # a line ending in a comma continues on the next (the parser reads one line each)
        HELPERS[f"enzpy.{_name}.{_s}"] = re.sub(r",\n\s+", ", ", _text.format(S=_s, T=_t, P=_p))
