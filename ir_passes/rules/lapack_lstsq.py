"""The LAPACK record for np.linalg.lstsq (rules/lapack.py has the steps LAPACK records share and
the contract).

`gelsd(m, n, nrhs, A, lda, B, ldb, S, rcond, rank)` solves min |A X - B| for each of B's nrhs
columns through the SVD of A: A is destroyed; B (max(m, n) rows) leaves holding X in its first n
rows and, when m > n, in rows n..m-1 a tail T whose columns have the residuals' norms
(|T_c| = |R_c|, R = B - A X: NumPy's residuals are their squares); S gets A's singular values,
rank the number above rcond. With A^+ = V S^{-1} U^T from a thin SVD (gesdd) of the saved A,
for A of full rank (m >= n or m < n):
- reverse: alpha_c = (T_c . Tbar_c) / (T_c . T_c), Y = A^{+T} Xbar, Z = A^+ Y, W = A^{+T} X,
  P = (I - A^+ A) Xbar, G = Y + R diag(alpha): Bbar = G,
  Abar = -G X^T + R Z^T + W P^T + U diag(Sbar) V^T;
- tangent: Y' = B' - A' X, X' = A^+ Y' + A^+ A^{+T} A'^T R + (I - A^+ A) A'^T W,
  T'_c = T_c (R_c . Y'_c) / (R_c . R_c), S' = diag(U^T A' V).
T itself is in no particular basis of the complement of A's range; only its columns' norms are
defined, and the tangent and adjoint above are those of the norms (a host's lstsq reads T only
for the residuals). A rank-deficient A (rank < min(m, n)) makes the solution discontinuous: the
adjoints and tangents of X and the residuals are nan there.
Complex data (zgelsd, S real): the same steps with ^H for ^T (A^+ = V S^{-1} U^H), the column
dot products Re(a^H b), S' = Re diag(U^H A' V).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import types as T
from ..ir.values import ConstFloat, ConstInt
from .blas import element_bytes
from .lapack import Lapack, Lin, i64, needs_gemm, primal_ops
from .lapack_spectral import thin_svd


@dataclass(frozen=True)
class Gelsd(Lapack):
    """`gelsd(m, n, nrhs, A, lda, B, ldb, S, rcond, rank)`; the fields are argument indices."""
    complex_data = True
    m: int = 1
    n: int = 2
    nrhs: int = 3
    a: int = 4
    lda: int = 5
    b: int = 6
    ldb: int = 7
    s: int = 8
    rcond: int = 9
    rank: int = 10
    RESULT: ClassVar[str] = "b"
    WRITES: ClassVar[tuple] = ("a", "b", "s", "rank")
    SHADOWED: ClassVar[tuple] = ("b", "s")
    READS: ClassVar[tuple] = ("a", "b")
    SHAPES: ClassVar[dict] = {"a": ("m", "n", "lda")}

    def input_bytes(self, b, ops, k):
        if k == self.rank:
            return ConstInt(T.i64, 4)
        if k == self.a:
            return super().input_bytes(b, ops, k)
        rows = b.select(b.icmp("sgt", i64(b, ops[self.m]), i64(b, ops[self.n])),
                        i64(b, ops[self.m]), i64(b, ops[self.n]))
        count = b.add(b.mul(i64(b, ops[self.ldb]), b.sub(i64(b, ops[self.nrhs]), ConstInt(T.i64, 1))), rows)
        return b.mul(count, ConstInt(T.i64, element_bytes(ops, self.kind)))

    def check(self, has_shadow, call, unsupported) -> bool:
        """Has the call a derivative to compute?"""
        self.refuse_constant_output(has_shadow, call, unsupported)
        if not (has_shadow(call.ops[self.a]) or has_shadow(call.ops[self.b])):
            return False
        needs_gemm(call, unsupported)
        if thin_svd() is None:
            raise unsupported(f"`{call.callee_name}` needs a registered gesdd for its derivative", call)
        return True

    def sizes(self, b, ops, L):
        m, n, c = (L.i64(ops[i]) for i in (self.m, self.n, self.nrhs))
        k = L.smaller(m, n)
        return m, n, c, k, L.when(b.icmp("sgt", m, n), b.sub(m, n))

    def poison(self, L, rank, k):
        """nan where the rank is below min(m, n), else 1."""
        b = L.b
        low = b.icmp("slt", b.cast("sext", b.load(T.i32, rank), T.i64), k)
        return b.select(low, ConstFloat(L.ft, float("nan")), ConstFloat(L.ft, 1.0))

    def reverse(self, g, call, block, b) -> None:
        if not self.check(g.has_shadow, call, g.unsupported):
            return
        L = Lin.reverse(self, g, call, b)
        h = "c" if L.cx else True                    # ^H on complex data
        ops = primal_ops(g, call, block, b)
        m, n, c, k, tail = self.sizes(b, ops, L)
        lda, ldb = L.i64(ops[self.lda]), L.i64(ops[self.ldb])
        mc, nc, kk = L.bytes(m, c), L.bytes(n, c), L.bytes(k, k)
        ac, u, vt, s, r, t1, y, z, w, p, num, den, zk, mid, uk = L.scratch(
            L.bytes(m, n), L.bytes(m, k), L.bytes(k, n), L.bytes(k), mc, L.bytes(k, c), mc, nc, mc,
            nc, L.bytes(c), L.bytes(c), kk, kk, L.bytes(m, k))
        a0 = self.input(g, call, self.a, block, b, always=True)
        b0 = self.input(g, call, self.b, block, b, always=True)
        bx = self.input(g, call, self.b, block, b, after=True)
        rank = self.input(g, call, self.rank, block, b, after=True)
        L.rect("copy_rect", m, n, a0, lda, ac, m)
        thin_svd().thin(L, m, n, k, ac, s, u, vt)
        db = g.shadow_at(call.ops[self.b], block, b)
        L.rect("copy_rect", m, c, b0, ldb, r, m)
        L.gemm(False, False, m, c, n, -1.0, a0, lda, bx, ldb, 1.0, r, m)        # R = B - A X
        L.scale(c, ConstInt(T.i64, 1), num, c, 0.0, real=True)
        L.scale(c, ConstInt(T.i64, 1), den, c, 0.0, real=True)
        tx, tb = L.at(bx, n, L.zero, ldb), L.at(db, n, L.zero, ldb)
        L.parts("col_dots", 2, [tail, c, tx, ldb, tb, ldb, num])
        L.parts("col_dots", 2, [tail, c, tx, ldb, tx, ldb, den])                # alpha = num / den
        self.apply(L, u, s, vt, m, n, k, c, db, ldb, t1, y, False)            # Y = A^{+T} Xbar
        self.apply(L, u, s, vt, m, n, k, c, y, m, t1, z, True)                # Z = A^+ Y
        self.apply(L, u, s, vt, m, n, k, c, bx, ldb, t1, w, False)            # W = A^{+T} X
        L.rect("copy_rect", n, c, db, ldb, p, n)
        L.gemm(False, False, k, c, n, 1.0, vt, k, db, ldb, 0.0, t1, k)
        L.gemm(h, False, n, c, k, -1.0, vt, k, t1, k, 1.0, p, n)             # P
        L.parts("add_scaled_cols", 2, [m, c, r, m, y, m, num, den])             # G
        bad = self.poison(L, rank, k)
        if g.has_shadow(call.ops[self.a]):
            da = g.shadow_at(call.ops[self.a], block, b)
            L.gemm(False, h, m, n, c, -1.0, y, m, bx, ldb, 0.0, da, lda)
            L.gemm(False, h, m, n, c, 1.0, r, m, z, n, 1.0, da, lda)
            L.gemm(False, h, m, n, c, 1.0, w, m, p, n, 1.0, da, lda)
            L.scale(m, n, da, lda, bad)
            L.scale(k, k, zk, k, 0.0)                                            # + U diag(Sbar) V^T
            thin_svd().middle(L, zk, zk, s, g.shadow_at(call.ops[self.s], block, b), 1.0, 0.0,
                              mid, k)
            L.gemm(False, False, m, k, k, 1.0, u, m, mid, k, 0.0, uk, m)
            L.gemm(False, False, m, n, k, 1.0, uk, m, vt, k, 1.0, da, lda)
        L.scale(L.when(b.icmp("sgt", n, m), b.sub(n, m)), c, L.at(db, m, L.zero, ldb), ldb, 0.0)
        L.rect("copy_rect", m, c, y, m, db, ldb)                          # Bbar = G
        L.scale(m, c, db, ldb, bad)
        L.scale(k, ConstInt(T.i64, 1), g.shadow_at(call.ops[self.s], block, b), k, 0.0, real=True)

    def apply(self, L, u, s, vt, m, n, k, c, src, lds, t, dst, transposed, beta=0.0):
        """dst = A^{+T} src (m x c, src n x c), or A^+ src when `transposed` (n x c, src m x c);
        t: k x c scratch. On complex data ^H for ^T."""
        h = "c" if L.cx else True
        if transposed:
            L.gemm(h, False, k, c, m, 1.0, u, m, src, lds, 0.0, t, k)
            L.divide_by(k, c, t, k, s, 1)
            L.gemm(h, False, n, c, k, 1.0, vt, k, t, k, beta, dst, n)
        else:
            L.gemm(False, False, k, c, n, 1.0, vt, k, src, lds, 0.0, t, k)
            L.divide_by(k, c, t, k, s, 1)
            L.gemm(False, False, m, c, k, 1.0, u, m, t, k, beta, dst, m)

    def tangent(self, fm, call) -> None:
        if not self.check(fm.has_shadow, call, fm.unsupported):
            fm.emit_primal(call)
            return
        ops = [fm.val(o) for o in call.ops]
        L = Lin.forward(self, fm, call, ops[self.kind])
        h = "c" if L.cx else True                    # ^H on complex data
        b = L.b
        m, n, c, k, tail = self.sizes(b, ops, L)
        lda, ldb = L.i64(ops[self.lda]), L.i64(ops[self.ldb])
        mc, nc = L.bytes(m, c), L.bytes(n, c)
        a0, ac, u, vt, s, b0, r, w, yp, t1, dx, q, num, den, mk, kk = L.scratch(
            L.bytes(m, n), L.bytes(m, n), L.bytes(m, k), L.bytes(k, n), L.bytes(k), mc, mc, mc, mc,
            L.bytes(k, c), nc, nc, L.bytes(c), L.bytes(c), L.bytes(m, k), L.bytes(k, k))
        L.rect("copy_rect", m, n, ops[self.a], lda, a0, m)      # before the call
        L.rect("copy_rect", m, c, ops[self.b], ldb, b0, m)
        cl = fm.emit_primal(call)
        L.copy(ac, a0, L.bytes(m, n))
        thin_svd().thin(L, m, n, k, ac, s, u, vt)
        x = cl.ops[self.b]
        L.rect("copy_rect", m, c, b0, m, r, m)
        L.gemm(False, False, m, c, n, -1.0, a0, m, x, ldb, 1.0, r, m)          # R
        self.apply(L, u, s, vt, m, n, k, c, x, ldb, t1, w, False)             # W = A^{+T} X
        bad = self.poison(L, cl.ops[self.rank], k)
        has_a = fm.has_shadow(call.ops[self.a])
        # the real parts of U^T A' V's diagonal: on complex data, every (2k + 2)-th float
        step = b.add(b.mul(k, ConstInt(T.i64, 2)), ConstInt(T.i64, 1)) if L.cx else k
        for j in range(fm.width):
            db = fm.shadow(call.ops[self.b], call)[j]
            L.rect("copy_rect", m, c, db, ldb, yp, m)
            if has_a:
                da = fm.shadow(call.ops[self.a], call)[j]
                L.gemm(False, False, m, c, n, -1.0, da, lda, x, ldb, 1.0, yp, m)   # Y'
                L.gemm(h, False, n, c, m, 1.0, da, lda, w, m, 0.0, dx, n)     # A'^T W
                L.gemm(False, False, k, c, n, 1.0, vt, k, dx, n, 0.0, t1, k)
                L.gemm(h, False, n, c, k, -1.0, vt, k, t1, k, 1.0, dx, n)     # (I - A^+ A) ...
                L.gemm(h, False, n, c, m, 1.0, da, lda, r, m, 0.0, q, n)      # A'^T R
                L.gemm(False, False, k, c, n, 1.0, vt, k, q, n, 0.0, t1, k)
                L.divide_by(k, c, t1, k, s, 1)
                L.divide_by(k, c, t1, k, s, 1)
                L.gemm(h, False, n, c, k, 1.0, vt, k, t1, k, 1.0, dx, n)      # A^+ A^{+T} ...
                self.apply(L, u, s, vt, m, n, k, c, yp, m, t1, dx, True, beta=1.0)
                L.gemm(False, h, m, k, n, 1.0, da, lda, vt, k, 0.0, mk, m)
                L.gemm(h, False, k, k, m, 1.0, u, m, mk, m, 0.0, kk, k)
                L.helper("diagonal", [k, kk, step, fm.shadow(call.ops[self.s], call)[j]])   # S'
            else:
                self.apply(L, u, s, vt, m, n, k, c, yp, m, t1, dx, True)
                L.scale(k, ConstInt(T.i64, 1), fm.shadow(call.ops[self.s], call)[j], k, 0.0, real=True)
            L.scale(c, ConstInt(T.i64, 1), num, c, 0.0, real=True)
            L.scale(c, ConstInt(T.i64, 1), den, c, 0.0, real=True)
            L.parts("col_dots", 2, [m, c, r, m, yp, m, num])
            L.parts("col_dots", 2, [m, c, r, m, r, m, den])
            tb = L.at(db, n, L.zero, ldb)
            L.scale(tail, c, tb, ldb, 0.0)
            L.parts("add_scaled_cols", 2, [tail, c, L.at(x, n, L.zero, ldb), ldb, tb, ldb, num, den])
            L.rect("copy_rect", n, c, dx, n, db, ldb)
            L.scale(b.add(n, tail), c, db, ldb, bad)
        L.release()


register_gelsd = Gelsd.registrar()
