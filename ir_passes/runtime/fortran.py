"""Helpers that call the host's Fortran-convention BLAS and LAPACK routines (every argument by
reference, 32-bit integers) with plain values: the triangular solves trsm and trsv and the LU
solve getrs. The routines are external symbols `enzpy.host.<d|s><routine>` that the host defines
(rules/blas.py's `register_host_routine`); an empty problem returns at once, so
the routine never sees a leading dimension of 0."""
from __future__ import annotations

from .helpers import HELPERS

# How a helper takes each argument, and how the routine gets it: a character flag and a
# floating scalar are stored as they are, a size (i64) truncated to i32, each behind a pointer;
# an array is passed as its pointer.
CHAR, SIZE, SCALAR, ARRAY = "char", "size", "scalar", "array"


def by_reference(routine: str, args: list[tuple[str, str]], sizes: tuple[str, ...],
                 info: bool, s: str, t: str, p: str) -> str:
    """LLVM IR of `enzpy.<routine>.<s>(args...)`, which returns at once when any of `sizes` is
    <= 0 and otherwise calls `enzpy.host.<p><routine>` with every argument by reference (and a
    trailing `info` when the routine reports one)."""
    plain = {CHAR: "i8", SIZE: "i64", SCALAR: t, ARRAY: "ptr"}
    params = ", ".join(f"{plain[kind]} %{name}" for name, kind in args)
    allocas, stores, refs = [], [], []
    for name, kind in args:
        if kind == ARRAY:
            refs.append(f"ptr %{name}")
            continue
        stored = "i32" if kind == SIZE else plain[kind]
        allocas.append(f"  %{name}.ref = alloca {stored}")
        if kind == SIZE:
            stores.append(f"  %{name}.32 = trunc i64 %{name} to i32")
        value = f"%{name}.32" if kind == SIZE else f"%{name}"
        stores.append(f"  store {stored} {value}, ptr %{name}.ref")
        refs.append(f"ptr %{name}.ref")
    if info:
        allocas.append("  %info.ref = alloca i32")
        refs.append("ptr %info.ref")
    tests = [f"  %empty.{name} = icmp sle i64 %{name}, 0" for name in sizes]
    empty = f"%empty.{sizes[0]}"
    for k, name in enumerate(sizes[1:]):
        tests.append(f"  %empty.{k} = or i1 {empty}, %empty.{name}")
        empty = f"%empty.{k}"
    host = f"@enzpy.host.{p}{routine}"
    return "\n".join([
        f"define internal void @enzpy.{routine}.{s}({params}) {{", "entry:", *allocas, *tests,
        f"  br i1 {empty}, label %done, label %call", "call:", *stores,
        f"  call void {host}({', '.join(refs)})", "  br label %done", "done:", "  ret void", "}",
        f"declare void {host}({', '.join('ptr' for _ in refs)})", ""])


ROUTINES = {
    # b (m x n) = alpha op(a)^{-1} b (side 'L') or alpha b op(a)^{-1} ('R'); a triangular (uplo
    # 'U' or 'L'), op per trans ('N' or 'T'), unit diagonal when diag is 'U'
    "trsm": ([("side", CHAR), ("uplo", CHAR), ("trans", CHAR), ("diag", CHAR), ("m", SIZE),
              ("n", SIZE), ("alpha", SCALAR), ("a", ARRAY), ("lda", SIZE), ("b", ARRAY),
              ("ldb", SIZE)], ("m", "n"), False),
    # x (n, stride incx) = op(a)^{-1} x, one right-hand side (OpenBLAS never threads it)
    "trsv": ([("uplo", CHAR), ("trans", CHAR), ("diag", CHAR), ("n", SIZE), ("a", ARRAY),
              ("lda", SIZE), ("x", ARRAY), ("incx", SIZE)], ("n",), False),
    # b (n x nrhs) = op(A)^{-1} b from A's packed LU factors a and getrf's pivots ipiv (32-bit)
    "getrs": ([("trans", CHAR), ("n", SIZE), ("nrhs", SIZE), ("a", ARRAY), ("lda", SIZE),
               ("ipiv", ARRAY), ("b", ARRAY), ("ldb", SIZE)], ("n", "nrhs"), True),
}
for _name, (_args, _sizes, _info) in ROUTINES.items():
    for _s, _t, _p in (("f64", "double", "d"), ("f32", "float", "s")):
        HELPERS[f"enzpy.{_name}.{_s}"] = by_reference(_name, _args, _sizes, _info, _s, _t, _p)
# complex getrs (zgetrs, cgetrs: no scalar argument) and trsm (ztrsm, ctrsm: alpha passed as
# the pointer to its (re, im) pair), `enzpy.getrs.c128`, `enzpy.trsm.c64` and so on
_CTRSM = [(name, ARRAY if name == "alpha" else kind) for name, kind in ROUTINES["trsm"][0]]
for _s, _p in (("c128", "z"), ("c64", "c")):
    HELPERS[f"enzpy.getrs.{_s}"] = by_reference("getrs", *ROUTINES["getrs"], _s, "", _p)
    HELPERS[f"enzpy.trsm.{_s}"] = by_reference("trsm", _CTRSM, *ROUTINES["trsm"][1:], _s, "", _p)
