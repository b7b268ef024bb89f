"""The triangular solve the LAPACK adjoints call, `enzpy.trsm_sized.<s>` (trsm_sized.ll): the arguments of
runtime/fortran.py's trsm, solved in the helper's own loops when the problem is small (k^2 * ncols
<= SMALL_WORK, k the triangle's order) and by the host's trsm above. Small calls never reach the
library's thread pool (OpenBLAS threads a trsm from 8 x 8 on) nor pay its per-call overhead,
and the user's BLAS thread settings are left alone (docs/performance.md, the Kalman filter).
Above SMALL_WORK and up to THREADED_WORK, when the host's BLAS runs several threads
(`enzpy.host.blas_threads.<s>` holds OpenBLAS's get_num_threads; enzyme_py/bridge/host_routines.py),
the solve is one host trsv per right-hand side, which OpenBLAS never threads.

The loops solve T X = alpha B column by column, T = op(a) for side 'L' and op(a)^T for side 'R'
(X op(a) = alpha B is op(a)^T X^T = alpha B^T): reading T through strides, a transposed side
swaps them and flips the triangle. Rows are solved from the top (lower T) or the bottom (upper
T), each from the rows solved before, which b already holds.

`enzpy.getrs_sized.<s>` (getrs_sized.ll) solves with LU factors as LAPACK's getrs does (the
row interchanges, then two trsm_sized solves) at every size: the host's getrs is never called,
since OpenBLAS threads it whenever it has several right-hand sides."""
from __future__ import annotations

from . import fortran  # noqa: F401  (defines enzpy.trsm.<s>, called above the threshold)
from . import matrix  # noqa: F401  (defines enzpy.swap_rows.<s>, getrs's interchanges)
from .helpers import HELPERS
from .source import load

SMALL_WORK = 16 * 16 * 16
THREADED_WORK = 256 * 256 * 256     # above: the host's trsm even when its BLAS threads

for _s, _t in (("f64", "double"), ("f32", "float")):
    HELPERS[f"enzpy.trsm_sized.{_s}"] = load("trsm_sized", SUFFIX=_s, TYPE=_t, WORK=SMALL_WORK,
                                                 THREADED_WORK=THREADED_WORK) \
        + HELPERS[f"enzpy.trsm.{_s}"] + HELPERS[f"enzpy.trsv.{_s}"]
    HELPERS[f"enzpy.getrs_sized.{_s}"] = load("getrs_sized", SUFFIX=_s, TYPE=_t) \
        + HELPERS[f"enzpy.trsm_sized.{_s}"] + HELPERS[f"enzpy.swap_rows.{_s}"]
