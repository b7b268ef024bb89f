"""LAPACK records for the Cholesky and LU factorizations and the inverse (rules/lapack.py has
the steps they share and the contract):

`potrf('U', n, A, lda)` overwrites the upper triangle of A with U, A = U^T U (column-major; it
reads only that triangle, and leaves the strictly lower one as it was):
- reverse: with Ubar = triu(shadow(A)), P = tril(U Ubar^T) with its diagonal halved,
  S = U^{-1} P U^{-T} (two trsm with U), the upper triangle of shadow(A) becomes S + S^T (S on the
  diagonal: the entry stands for both triangles); the lower one passes through (Murray 2016);
- tangent: X = U^{-T} sym(A') U^{-1} (two trsm with U), U' = triu(X, diagonal halved) U (gemm).
Only the upper variant is implemented (the one `np.linalg.cholesky` calls). Complex data (A
Hermitian, A = U^H U; the factorization is not complex-analytic): the same steps with U^H for U^T
(P = tril(U Ubar^H), S = U^{-1} P U^{-H}; X = U^{-H} herm(A') U^{-1}), where the triangle stands
for a Hermitian matrix whose diagonal is real: the upper triangle of shadow(A) becomes
S + S^H off the diagonal and Re S on it, and herm(A') mirrors A' conjugated, its diagonal real.

`getrf(n, n, A, lda, ipiv)` overwrites a square A with its packed LU factors, A = P L U (L unit
lower, U upper, P from the row interchanges ipiv):
- reverse: with Lbar, Ubar the strictly lower and upper parts of shadow(A),
  X = tril(L^T Lbar, -1) + triu(Ubar U^T), shadow(A) = P L^{-T} X U^{-T} (gemm, two trsm, the
  interchanges undone);
- tangent: F = L^{-1} P^T A' U^{-1}, the packed tangent tril(L tril(F, -1), -1) + triu(triu(F) U).
The derivative of the factors is undefined where A is singular (a zero pivot): LAPACK reports
it and the kernel (a slogdet returns -inf) decides; the adjoints then hold inf or nan.

`getri(n, A, lda, ipiv)` overwrites packed LU factors with the inverse V = (P L U)^{-1}:
- reverse: G = -V^T Vbar V^T (the adjoint for the matrix the factors stand for), then the
  factors' adjoints, strictly lower part of P^T G U^T and upper part of L^T P^T G (gemms);
  getrf's reverse turns them back into G;
- tangent: V' = -V A' V with A' = P (L' U + L U') from the factors' tangents (gemms).

Complex data, getrf and getri: every step above is complex-analytic, so with
shadows holding dL/dRe + i dL/dIm the reverse is conj(real formula(conj(shadow))): shadow(A) is
conjugated in place before the steps and after them, with the same gemm, complex trsm, and the
`c` variants of the elementwise helpers and row interchanges; the tangents are the real ones.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir.values import ConstInt
from .lapack import Lapack, Lin, needs_gemm


def square_reverse(r, g, call, block, b):
    """The start of record r's reverse on its n x n matrix A (fields n, a, lda): None when A has
    no shadow, else (Lin, n, lda, the bytes of an n x n scratch matrix)."""
    r.check(g.has_shadow, call, g.unsupported)
    if not g.has_shadow(call.ops[r.a]):
        return None
    L = Lin.reverse(r, g, call, b)
    n, lda = (L.i64(g.primal_at(call.ops[i], block, b)) for i in (r.n, r.lda))
    return L, n, lda, L.bytes(n, n)


def square_tangent(r, fm, call):
    """The start of record r's tangent on its n x n matrix A, after the primal call: None when A
    has no shadow, else (Lin, the call, n, lda, the bytes of an n x n scratch matrix)."""
    r.check(fm.has_shadow, call, fm.unsupported)
    c = fm.emit_primal(call)
    if not fm.has_shadow(call.ops[r.a]):
        return None
    L = Lin.forward(r, fm, call, c.ops[r.kind])
    n, lda = L.i64(c.ops[r.n]), c.ops[r.lda]
    return L, c, n, lda, L.bytes(n, n)


@dataclass(frozen=True)
class Potrf(Lapack):
    """`potrf(uplo, n, A, lda)`; the fields are argument indices."""
    complex_data = True
    uplo: int = 1
    n: int = 2
    a: int = 3
    lda: int = 4
    SHAPES: ClassVar[dict] = {"a": ("n", "n", "lda")}

    def check(self, has_shadow, call, unsupported) -> None:
        if not has_shadow(call.ops[self.a]):
            return
        u = call.ops[self.uplo]
        if not isinstance(u, ConstInt) or u.value not in (ord("U"), ord("u")):
            raise unsupported(f"`{call.callee_name}` other than on the upper triangle", call)
        needs_gemm(call, unsupported, "trsm")

    def reverse(self, g, call, block, b) -> None:
        if (start := square_reverse(self, g, call, block, b)) is None:
            return
        L, n, lda, nn = start
        uc, w2, w3 = L.scratch(nn, nn, nn)
        factor = self.input(g, call, self.a, block, b, after=True)
        da = g.shadow_at(call.ops[self.a], block, b)
        h = "C" if L.cx else "T"                        # U^H on complex data
        L.map("upper_of", n, factor, lda, uc, n)        # U
        L.map("upper_of", n, da, lda, w3, n)            # Ubar
        if L.cx:
            L.conj((n, n, w3, n))
        L.gemm(False, True, n, n, n, 1.0, uc, n, w3, n, 0.0, w2, n)
        L.map("half_lower", n, w2, n, w2, n)            # P
        L.trsm("L", "U", "N", "N", n, n, uc, n, w2, n)  # U^{-1} P
        L.trsm("R", "U", h, "N", n, n, uc, n, w2, n)    # S = U^{-1} P U^{-T}
        L.helper("hfold_upper" if L.cx else "fold_upper", [n, w2, n, da, lda])

    def tangent(self, fm, call) -> None:
        if (start := square_tangent(self, fm, call)) is None:
            return
        L, c, n, lda, nn = start
        uc, sym, t1 = L.scratch(nn, nn, nn)
        L.map("upper_of", n, c.ops[self.a], lda, uc, n)     # U
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            L.helper("hmirror_upper" if L.cx else "mirror_upper", [n, da, lda, sym, n])
            L.trsm("L", "U", "C" if L.cx else "T", "N", n, n, uc, n, sym, n)  # U^{-T} sym(A')
            L.trsm("R", "U", "N", "N", n, n, uc, n, sym, n)  # X = U^{-T} sym(A') U^{-1}
            L.map("half_upper", n, sym, n, t1, n)
            L.gemm(False, False, n, n, n, 1.0, t1, n, uc, n, 0.0, sym, n)
            L.map("put_upper", n, sym, n, da, lda)          # U' = triu_half(X) U
        L.release()


def packed_factors(L, n, packed, lda, lo, up) -> None:
    """L (unit lower) and U (upper) of packed LU factors."""
    L.map("unit_lower_of", n, packed, lda, lo, n)
    L.map("upper_of", n, packed, lda, up, n)


@dataclass(frozen=True)
class Getrf(Lapack):
    """`getrf(m, n, A, lda, ipiv)` with m = n; the fields are argument indices."""
    complex_data = True
    m: int = 1
    n: int = 2
    a: int = 3
    lda: int = 4
    ipiv: int = 5
    WRITES: ClassVar[tuple] = ("a", "ipiv")
    SHAPES: ClassVar[dict] = {"a": ("n", "n", "lda")}
    INTS: ClassVar[dict] = {"ipiv": "n"}

    def check(self, has_shadow, call, unsupported) -> None:
        if not has_shadow(call.ops[self.a]):
            return
        m, n = call.ops[self.m], call.ops[self.n]
        if m is not n and not (isinstance(m, ConstInt) and isinstance(n, ConstInt) and m.value == n.value):
            raise unsupported(f"`{call.callee_name}` of a matrix that may not be square", call)
        needs_gemm(call, unsupported, "trsm")

    def reverse(self, g, call, block, b) -> None:
        if (start := square_reverse(self, g, call, block, b)) is None:
            return
        L, n, lda, nn = start
        lo, up, x, w, t = L.scratch(nn, nn, nn, nn, nn)
        packed = self.input(g, call, self.a, block, b, after=True)
        ipiv = self.input(g, call, self.ipiv, block, b, after=True)
        da = g.shadow_at(call.ops[self.a], block, b)
        packed_factors(L, n, packed, lda, lo, up)
        if L.cx:
            L.conj((n, n, da, lda))
        L.map("strict_lower_of", n, da, lda, w, n)          # Lbar
        L.gemm(True, False, n, n, n, 1.0, lo, n, w, n, 0.0, x, n)
        L.map("strict_lower_of", n, x, n, x, n)             # tril(L^T Lbar, -1)
        L.map("upper_of", n, da, lda, w, n)                 # Ubar
        L.gemm(False, True, n, n, n, 1.0, w, n, up, n, 0.0, t, n)
        L.map("put_upper", n, t, n, x, n)                   # X
        L.trsm("L", "L", "T", "U", n, n, lo, n, x, n)      # L^{-T} X
        L.trsm("R", "U", "T", "N", n, n, up, n, x, n)      # L^{-T} X U^{-T}
        L.map("copied", n, x, n, da, lda)
        L.swap_rows(n, ipiv, da, lda, True)                 # P (...)
        if L.cx:
            L.conj((n, n, da, lda))

    def tangent(self, fm, call) -> None:
        if (start := square_tangent(self, fm, call)) is None:
            return
        L, c, n, lda, nn = start
        lo, up, w, t, work = L.scratch(nn, nn, nn, nn, nn)
        packed_factors(L, n, c.ops[self.a], lda, lo, up)
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            L.map("copied", n, da, lda, w, n)
            L.swap_rows(n, c.ops[self.ipiv], w, n, False)   # P^T A'
            L.trsm("L", "L", "N", "U", n, n, lo, n, w, n)  # L^{-1} P^T A'
            L.trsm("R", "U", "N", "N", n, n, up, n, w, n)  # F
            L.map("strict_lower_of", n, w, n, t, n)
            L.gemm(False, False, n, n, n, 1.0, lo, n, t, n, 0.0, work, n)
            L.map("strict_lower_of", n, work, n, da, lda)   # tril(L tril(F,-1), -1)
            L.map("upper_of", n, w, n, t, n)
            L.gemm(False, False, n, n, n, 1.0, t, n, up, n, 0.0, work, n)
            L.map("put_upper", n, work, n, da, lda)         # triu(triu(F) U)
        L.release()


@dataclass(frozen=True)
class Getri(Lapack):
    """`getri(n, A, lda, ipiv)`; the fields are argument indices."""
    complex_data = True
    n: int = 1
    a: int = 2
    lda: int = 3
    ipiv: int = 4
    SHAPES: ClassVar[dict] = {"a": ("n", "n", "lda")}
    INTS: ClassVar[dict] = {"ipiv": "n"}

    def check(self, has_shadow, call, unsupported) -> None:
        if has_shadow(call.ops[self.a]):
            needs_gemm(call, unsupported)

    def reverse(self, g, call, block, b) -> None:
        if (start := square_reverse(self, g, call, block, b)) is None:
            return
        L, n, lda, nn = start
        lo, up, t, x = L.scratch(nn, nn, nn, nn)
        packed = self.input(g, call, self.a, block, b, always=True)
        ipiv = self.input(g, call, self.ipiv, block, b, always=True)
        inv = self.input(g, call, self.a, block, b, after=True)
        da = g.shadow_at(call.ops[self.a], block, b)
        packed_factors(L, n, packed, lda, lo, up)
        if L.cx:
            L.conj((n, n, da, lda))
        L.gemm(True, False, n, n, n, 1.0, inv, lda, da, lda, 0.0, t, n)
        L.gemm(False, True, n, n, n, -1.0, t, n, inv, lda, 0.0, x, n)      # G
        L.swap_rows(n, ipiv, x, n, False)                                   # P^T G
        L.gemm(False, True, n, n, n, 1.0, x, n, up, n, 0.0, t, n)
        L.map("strict_lower_of", n, t, n, da, lda)                          # Lbar
        L.gemm(True, False, n, n, n, 1.0, lo, n, x, n, 0.0, t, n)
        L.map("put_upper", n, t, n, da, lda)                                # Ubar
        if L.cx:
            L.conj((n, n, da, lda))

    def tangent(self, fm, call) -> None:
        self.check(fm.has_shadow, call, fm.unsupported)
        if not fm.has_shadow(call.ops[self.a]):
            fm.emit_primal(call)
            return
        ops = [fm.val(o) for o in call.ops]
        L = Lin.forward(self, fm, call, ops[self.kind])
        n, lda = L.i64(ops[self.n]), ops[self.lda]
        nn = L.bytes(n, n)
        lo, up, dl, t, x = L.scratch(nn, nn, nn, nn, nn)
        packed_factors(L, n, ops[self.a], lda, lo, up)                 # before getri
        c = fm.emit_primal(call)
        inv = c.ops[self.a]
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            L.map("strict_lower_of", n, da, lda, dl, n)                # L'
            L.gemm(False, False, n, n, n, 1.0, dl, n, up, n, 0.0, x, n)
            L.map("upper_of", n, da, lda, dl, n)                       # U'
            L.gemm(False, False, n, n, n, 1.0, lo, n, dl, n, 1.0, x, n)
            L.swap_rows(n, c.ops[self.ipiv], x, n, True)               # A'
            L.gemm(False, False, n, n, n, 1.0, inv, lda, x, n, 0.0, t, n)
            L.gemm(False, False, n, n, n, -1.0, t, n, inv, lda, 0.0, da, lda)
        L.release()


register_potrf = Potrf.registrar()


register_getrf = Getrf.registrar()


register_getri = Getri.registrar()
