"""The triangular solve the LAPACK adjoints call, `enzpy.trsm_sized.<s>`: the arguments of
runtime/fortran.py's trsm, solved in the helper's own loops when the problem is small (k^2 * ncols
<= SMALL_WORK, k the triangle's order) and by the host's trsm above. Small calls never reach the
library's thread pool (OpenBLAS threads a trsm from 8 x 8 on) nor pay its per-call overhead,
and the user's BLAS thread settings are left alone (docs/performance.md, the Kalman filter).

The loops solve T X = alpha B column by column, T = op(a) for side 'L' and op(a)^T for side 'R'
(X op(a) = alpha B is op(a)^T X^T = alpha B^T): reading T through strides, a transposed side
swaps them and flips the triangle. Rows are solved from the top (lower T) or the bottom (upper
T), each from the rows solved before, which b already holds."""
from __future__ import annotations

from . import fortran  # noqa: F401  (defines enzpy.trsm.<s>, called above the threshold)
from . import matrix  # noqa: F401  (defines enzpy.swap_rows.<s>, getrs's interchanges)
from .helpers import HELPERS

SMALL_WORK = 16 * 16 * 16

TRSM_SIZED = """
define internal void @enzpy.trsm_sized.{S}({P}) {{
entry:
  %left = icmp eq i8 %side, 76
  %k = select i1 %left, i64 %m, i64 %n
  %nc = select i1 %left, i64 %n, i64 %m
  %kk = mul i64 %k, %k
  %work = mul i64 %kk, %nc
  %small = icmp sle i64 %work, {WORK}
  br i1 %small, label %setup, label %library
library:
  call void @enzpy.trsm.{S}({P})
  ret void
setup:
  %isn = icmp eq i8 %trans, 78
  %transposed = xor i1 %isn, true
  %right = xor i1 %left, true
  %flip = xor i1 %transposed, %right
  %ars = select i1 %flip, i64 %lda, i64 1
  %acs = select i1 %flip, i64 1, i64 %lda
  %isl = icmp eq i8 %uplo, 76
  %lower = xor i1 %isl, %flip
  %brs = select i1 %left, i64 1, i64 %ldb
  %bcs = select i1 %left, i64 %ldb, i64 1
  %unit = icmp eq i8 %diag, 85
  %nok = icmp sle i64 %k, 0
  %nonc = icmp sle i64 %nc, 0
  %none = or i1 %nok, %nonc
  %klast = sub i64 %k, 1
  br i1 %none, label %done, label %col
col:
  %c = phi i64 [ 0, %setup ], [ %c1, %colnext ]
  %bcol = mul i64 %c, %bcs
  br label %row
row:
  %ii = phi i64 [ 0, %col ], [ %ii1, %rownext ]
  %up = sub i64 %klast, %ii
  %i = select i1 %lower, i64 %ii, i64 %up
  %ip1 = add i64 %i, 1
  %jlo = select i1 %lower, i64 0, i64 %ip1
  %jhi = select i1 %lower, i64 %i, i64 %k
  %irow = mul i64 %i, %brs
  %bi.o = add i64 %irow, %bcol
  %bi.p = getelementptr {T}, ptr %b, i64 %bi.o
  %bi = load {T}, ptr %bi.p
  %s0 = fmul {T} %alpha, %bi
  %tirow = mul i64 %i, %ars
  %empty = icmp sge i64 %jlo, %jhi
  br i1 %empty, label %divide, label %inner
inner:
  %j = phi i64 [ %jlo, %row ], [ %j1, %inner ]
  %s = phi {T} [ %s0, %row ], [ %s1, %inner ]
  %tjcol = mul i64 %j, %acs
  %t.o = add i64 %tirow, %tjcol
  %t.p = getelementptr {T}, ptr %a, i64 %t.o
  %t = load {T}, ptr %t.p
  %jrow = mul i64 %j, %brs
  %x.o = add i64 %jrow, %bcol
  %x.p = getelementptr {T}, ptr %b, i64 %x.o
  %x = load {T}, ptr %x.p
  %tx = fmul {T} %t, %x
  %s1 = fsub {T} %s, %tx
  %j1 = add i64 %j, 1
  %jmore = icmp slt i64 %j1, %jhi
  br i1 %jmore, label %inner, label %divide
divide:
  %sum = phi {T} [ %s0, %row ], [ %s1, %inner ]
  %ticol = mul i64 %i, %acs
  %d.o = add i64 %tirow, %ticol
  %d.p = getelementptr {T}, ptr %a, i64 %d.o
  %d = load {T}, ptr %d.p
  %q = fdiv {T} %sum, %d
  %xi = select i1 %unit, {T} %sum, {T} %q
  store {T} %xi, ptr %bi.p
  br label %rownext
rownext:
  %ii1 = add i64 %ii, 1
  %rmore = icmp slt i64 %ii1, %k
  br i1 %rmore, label %row, label %colnext
colnext:
  %c1 = add i64 %c, 1
  %cmore = icmp slt i64 %c1, %nc
  br i1 %cmore, label %col, label %done
done:
  ret void
}}
"""

# getrs's arguments: below SMALL_WORK (n^2 * nrhs), P^T b then the two triangular solves ('N'),
# or the solves with the transposed factors then P b ('T'), in own loops; above, the host's
# getrs (OpenBLAS's getrs 'N' with nrhs > 1 threads at any size: 8 ms for 8 x 8 on a busy
# machine, against 2 us for 'T')
GETRS_SIZED = """
define internal void @enzpy.getrs_sized.{S}({G}) {{
entry:
  %nn = mul i64 %n, %n
  %work = mul i64 %nn, %nrhs
  %small = icmp sle i64 %work, {WORK}
  br i1 %small, label %own, label %library
library:
  call void @enzpy.getrs.{S}({G})
  ret void
own:
  %isn = icmp eq i8 %trans, 78
  br i1 %isn, label %plain, label %transposed
plain:
  call void @enzpy.swap_rows.{S}(i64 %n, i64 %nrhs, ptr %ipiv, ptr %b, i64 %ldb, i64 0)
  call void @enzpy.trsm_sized.{S}(i8 76, i8 76, i8 78, i8 85, {R})
  call void @enzpy.trsm_sized.{S}(i8 76, i8 85, i8 78, i8 78, {R})
  ret void
transposed:
  call void @enzpy.trsm_sized.{S}(i8 76, i8 85, i8 84, i8 78, {R})
  call void @enzpy.trsm_sized.{S}(i8 76, i8 76, i8 84, i8 85, {R})
  call void @enzpy.swap_rows.{S}(i64 %n, i64 %nrhs, ptr %ipiv, ptr %b, i64 %ldb, i64 1)
  ret void
}}
"""

for _s, _t in (("f64", "double"), ("f32", "float")):
    _params = (f"i8 %side, i8 %uplo, i8 %trans, i8 %diag, i64 %m, i64 %n, {_t} %alpha, ptr %a, "
               "i64 %lda, ptr %b, i64 %ldb")
    HELPERS[f"enzpy.trsm_sized.{_s}"] = TRSM_SIZED.format(S=_s, T=_t, P=_params, WORK=SMALL_WORK) \
        + HELPERS[f"enzpy.trsm.{_s}"]
    _g = "i8 %trans, i64 %n, i64 %nrhs, ptr %a, i64 %lda, ptr %ipiv, ptr %b, i64 %ldb"
    _r = f"i64 %n, i64 %nrhs, {_t} 1.0, ptr %a, i64 %lda, ptr %b, i64 %ldb"
    HELPERS[f"enzpy.getrs_sized.{_s}"] = GETRS_SIZED.format(S=_s, T=_t, G=_g, R=_r, WORK=SMALL_WORK) \
        + HELPERS[f"enzpy.trsm_sized.{_s}"] + HELPERS[f"enzpy.getrs.{_s}"] + HELPERS[f"enzpy.swap_rows.{_s}"]
