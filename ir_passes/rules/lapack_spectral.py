"""LAPACK records for the spectral decompositions (rules/lapack.py has the steps they share and
the contract):

`syevd(jobz, uplo, n, A, lda, w)` (behind `np.linalg.eigh`, `eigvalsh`): A = V diag(w) V^T from
one triangle of A; V overwrites A when jobz is 'V' (else A is left undefined):
- reverse: Abar = V (diag(wbar) + F o (V^T Vbar)) V^T with F_ij = 1 / (w_j - w_i), folded onto
  the triangle read; V and w are computed again from the saved A (a syevd, gemms);
- tangent: T = V^T sym(A') V, w' = diag(T), V' = V (F o T).
Complex data (heevd, A Hermitian, A = V diag(w) V^H, w real): the same steps with V^H for V^T,
the triangle read standing for a Hermitian matrix with a real diagonal (sym(A') mirrors A'
conjugated; the fold takes X_ij + conj(X_ji) off the diagonal and Re X_ii on it). Each
eigenvector's phase is free (LAPACK picks one): the adjoint is that of gauge-invariant losses
(|V_ij|^2, w, V diag(f(w)) V^H), for which Im diag(V^H Vbar) = 0, and the tangent takes
Im diag(V^H V') = 0.
F is infinite for repeated eigenvalues: there the eigenvectors, and so their derivatives, are not
unique, and the adjoints hold inf or nan unless the eigenvectors' seed is zero (F o T takes 0
where T does: eigvalsh of a matrix with repeated eigenvalues has finite derivatives).

`gesdd(jobz, m, n, A, lda, s, U, ldu, VT, ldvt)` (behind `np.linalg.svd`, `pinv`, `cond`, the
matrix 2-norms): A = U diag(s) V^T, k = min(m, n) singular values, U m x k and V^T k x n (jobz
'S'), U m x m and V^T n x n (jobz 'A': full_matrices=True), s only (jobz 'N'); A is destroyed.
U, s, V^T are computed again (jobz 'S') from the saved A. With F_ij = 1 / (s_j^2 - s_i^2):
- reverse (Townsend 2016): J = U^T Ubar - Ubar^T U, K = V^T Vbar - Vbar^T V,
  Abar = U (F o (J S + S K) + diag(sbar)) V^T + (I - U U^T) Ubar S^{-1} V^T
         + U S^{-1} Vbar^T (I - V V^T)
  (the last two vanish for square matrices and are skipped there);
- tangent: P = U^T A' V, s' = diag(P), U' = U (F o (P S + S P^T)) + (I - U U^T) A' V S^{-1},
  V' = V (F o (S P + P^T S)) + (I - V V^T) A'^T U S^{-1}.
Where the singular vectors are not unique the derivative does not exist: F is infinite for
repeated singular values and S^{-1} for zero ones (a rectangular matrix's), and the adjoints hold
inf or nan, unless the vectors' seed gives 0 there (F o (...) and (...) S^{-1} take 0 where the
numerator is 0, so singular values alone stay finite). The columns of U (rows of V^T) that jobz
'A' adds past the k-th span the complement of A's range in no particular basis: a nonzero seed
on them makes shadow(A) all nan, and their tangent is nan.
Complex data (zgesdd, A = U diag(s) V^H, s real): the same steps with ^H for ^T (J = U^H Ubar -
Ubar^H U, K likewise, P = U^H A' V; F o (...) takes P^H for P^T). A column of U and the same
column of V may turn by a common phase: the tangent picks U^H U' with imaginary diagonal
Im(P_ii) / s_i and V^H V' with zero diagonal, and the adjoint is that choice's, which for losses
invariant under the phases (|U_ij|^2, s, U diag(f(s)) V^H) is their gradient: it adds
i Im(J_ii) / (2 s_i) to the middle's diagonal.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import types as T
from ..ir.values import Constant, ConstFloat, ConstInt
from .blas import BLAS
from .lapack import Lapack, Lin, i64, needs_gemm, primal_ops

NULL = Constant(T.ptr, "null")
GESDD_PARAMS = [T.i8, T.i8, T.i64, T.i64, T.ptr, T.i64, T.ptr, T.ptr, T.i64, T.ptr, T.i64]


@dataclass(frozen=True)
class Syevd(Lapack):
    """`syevd(jobz, uplo, n, A, lda, w)`; the fields are argument indices."""
    complex_data = True
    jobz: int = 1
    uplo: int = 2
    n: int = 3
    a: int = 4
    lda: int = 5
    w: int = 6
    RESULT: ClassVar[str] = "w"
    WRITES: ClassVar[tuple] = ("a", "w")
    SHAPES: ClassVar[dict] = {"a": ("n", "n", "lda")}

    def flags(self, call, unsupported):
        """(vectors wanted, lower triangle read); refuses flags that are not constants."""
        j, u = call.ops[self.jobz], call.ops[self.uplo]
        if not (isinstance(j, ConstInt) and isinstance(u, ConstInt)) or \
                chr(j.value) not in "VvNn" or chr(u.value) not in "LlUu":
            raise unsupported(f"`{call.callee_name}` with flags that are not constants", call)
        return chr(j.value) in "Vv", chr(u.value) in "Ll"

    def check(self, has_shadow, call, unsupported):
        """(vectors wanted, lower triangle read) of a call with a derivative."""
        self.refuse_constant_output(has_shadow, call, unsupported)
        if not has_shadow(call.ops[self.a]):
            return None
        flags = self.flags(call, unsupported)
        needs_gemm(call, unsupported)
        return flags

    def eigen(self, L, ops, n, v, w) -> None:
        """V (in v, which holds a copy of A) and w: a syevd asking for vectors."""
        again = list(ops)
        again[self.kind], again[self.jobz], again[self.n] = L.kind, ConstInt(T.i8, ord("V")), n
        again[self.a], again[self.lda], again[self.w] = v, n, w
        L.b.call(self.name, L.call.type, again)

    def reverse(self, g, call, block, b) -> None:
        flags = self.check(g.has_shadow, call, g.unsupported)
        if flags is None:
            return
        vectors, lower = flags
        L = Lin.reverse(self, g, call, b)
        ops = primal_ops(g, call, block, b)
        ops[self.uplo] = call.ops[self.uplo]
        n, lda = L.i64(ops[self.n]), L.i64(ops[self.lda])
        nn = L.bytes(n, n)
        v, t, x, w = L.scratch(nn, nn, nn, L.bytes(n))
        a0 = self.input(g, call, self.a, block, b, always=True)
        L.map("copied", n, a0, lda, v, n)
        self.eigen(L, ops, n, v, w)
        da = g.shadow_at(call.ops[self.a], block, b)
        dw = g.shadow_at(call.ops[self.w], block, b)
        h = "c" if L.cx else True                      # V^H on complex data
        if vectors:
            L.gemm(h, False, n, n, n, 1.0, v, n, da, lda, 0.0, t, n)
        else:
            L.scale(n, n, t, n, 0.0)
        L.helper("ceig_middle" if L.cx else "eig_middle", [n, t, w, dw, x])
        L.gemm(False, False, n, n, n, 1.0, v, n, x, n, 0.0, t, n)
        L.gemm(False, h, n, n, n, 1.0, t, n, v, n, 0.0, x, n)
        fold = "fold_lower_zero" if lower else "fold_upper_zero"
        L.helper("h" + fold if L.cx else fold, [n, x, n, da, lda])
        L.scale(n, ConstInt(T.i64, 1), dw, n, 0.0, real=True)

    def tangent(self, fm, call) -> None:
        flags = self.check(fm.has_shadow, call, fm.unsupported)
        if flags is None:
            fm.emit_primal(call)
            return
        vectors, lower = flags
        ops = [fm.val(o) for o in call.ops]
        L = Lin.forward(self, fm, call, ops[self.kind])
        n, lda = L.i64(ops[self.n]), ops[self.lda]
        nn = L.bytes(n, n)
        v, t, x, sym, w = L.scratch(nn, nn, nn, nn, L.bytes(n))
        L.map("copied", n, ops[self.a], lda, v, n)        # before the call
        c = fm.emit_primal(call)
        self.eigen(L, c.ops, n, v, w)
        mirror = "mirror_lower" if lower else "mirror_upper"
        # the real parts of T's diagonal: on complex data, every (2n + 2)-th float
        step = L.b.add(L.b.mul(n, ConstInt(T.i64, 2)), ConstInt(T.i64, 1)) if L.cx else n
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            L.helper("h" + mirror if L.cx else mirror, [n, da, lda, sym, n])
            L.gemm("c" if L.cx else True, False, n, n, n, 1.0, v, n, sym, n, 0.0, x, n)
            L.gemm(False, False, n, n, n, 1.0, x, n, v, n, 0.0, t, n)          # T
            L.helper("diagonal", [n, t, step, fm.shadow(call.ops[self.w], call)[j]])   # w'
            if vectors:
                L.helper("ceig_middle" if L.cx else "eig_middle", [n, t, w, NULL, x])  # F o T
                L.gemm(False, False, n, n, n, 1.0, v, n, x, n, 0.0, da, lda)
            else:
                L.scale(n, n, da, lda, 0.0)
        L.release()


@dataclass(frozen=True)
class Gesdd(Lapack):
    """`gesdd(jobz, m, n, A, lda, s, U, ldu, VT, ldvt)`; the fields are argument indices."""
    complex_data = True
    jobz: int = 1
    m: int = 2
    n: int = 3
    a: int = 4
    lda: int = 5
    s: int = 6
    u: int = 7
    ldu: int = 8
    vt: int = 9
    ldvt: int = 10
    RESULT: ClassVar[str] = "s"
    SHAPES: ClassVar[dict] = {"a": ("m", "n", "lda")}

    def vectors(self, call) -> bool:
        """Are U and V^T computed? (Only a constant 'N' says no.)"""
        j = call.ops[self.jobz]
        return not (isinstance(j, ConstInt) and chr(j.value) in "Nn")

    def outputs(self, call) -> tuple:
        more = (call.ops[self.u], call.ops[self.vt]) if self.vectors(call) else ()
        return (call.ops[self.a], call.ops[self.s]) + more

    def shadowed(self, call) -> tuple:
        return (call.ops[self.s],) + ((call.ops[self.u], call.ops[self.vt]) if self.vectors(call) else ())

    def check(self, has_shadow, call, unsupported) -> None:
        self.refuse_constant_output(has_shadow, call, unsupported)
        if has_shadow(call.ops[self.a]):
            needs_gemm(call, unsupported)

    def thin(self, L, m, n, k, a, s, u, vt) -> None:
        """The thin SVD of the m x n matrix at a (leading dimension m, destroyed): s, U (m x k),
        V^T (k x n)."""
        L.module.declare(self.name, T.i32, GESDD_PARAMS)
        args = [None] * len(GESDD_PARAMS)
        for i, v in ((self.kind, L.kind), (self.jobz, ConstInt(T.i8, ord("S"))), (self.m, m),
                     (self.n, n), (self.a, a), (self.lda, m), (self.s, s), (self.u, u), (self.ldu, m),
                     (self.vt, vt), (self.ldvt, k)):
            args[i] = v
        L.b.call(self.name, T.i32, args)

    def columns(self, L, jobz, m, k):
        """The columns of U (rows of V^T) the call computed: min(m, n), or m for jobz 'A'."""
        b = L.b
        full = b.icmp("eq", i64(b, jobz), ConstInt(T.i64, ord("A")))
        return b.select(full, m, k)

    def reverse(self, g, call, block, b) -> None:
        self.check(g.has_shadow, call, g.unsupported)
        if not g.has_shadow(call.ops[self.a]):
            return
        L = Lin.reverse(self, g, call, b)
        h = "c" if L.cx else True                    # ^H on complex data
        ops = primal_ops(g, call, block, b)
        m, n, lda = (L.i64(ops[i]) for i in (self.m, self.n, self.lda))
        k = L.smaller(m, n)
        mk, kn, kk = L.bytes(m, k), L.bytes(k, n), L.bytes(k, k)
        ac, u, vt, s, x1, x2, y1, y2, mid, w, r, q, acc = L.scratch(
            L.bytes(m, n), mk, kn, L.bytes(k), kk, kk, kk, kk, kk, mk, mk, kn, L.size)
        a0 = self.input(g, call, self.a, block, b, always=True)
        L.rect("copy_rect", m, n, a0, lda, ac, m)
        self.thin(L, m, n, k, ac, s, u, vt)
        da = g.shadow_at(call.ops[self.a], block, b)
        ds = g.shadow_at(call.ops[self.s], block, b)
        if self.vectors(call):
            du, dvt = (g.shadow_at(call.ops[i], block, b) for i in (self.u, self.vt))
            ldu, ldvt = (L.i64(ops[i]) for i in (self.ldu, self.ldvt))
            ucols = self.columns(L, ops[self.jobz], m, k)
            b.store(ConstFloat(L.ft, 0.0), acc)      # seeds on columns of U past the k-th
            L.sum_abs(m, b.sub(ucols, k), L.at(du, ConstInt(T.i64, 0), k, ldu), ldu, acc)
            L.sum_abs(b.sub(ldvt, k), n, L.at(dvt, k, ConstInt(T.i64, 0), ldvt), ldvt, acc)
            L.gemm(h, False, k, k, m, 1.0, u, m, du, ldu, 0.0, x1, k)          # U^T Ubar
            L.gemm(False, h, k, k, n, 1.0, vt, k, dvt, ldvt, 0.0, x2, k)       # V^T Vbar
            antisym = "hantisym" if L.cx else "antisym"
            L.helper(antisym, [k, x1, k, y1, k])
            L.helper(antisym, [k, x2, k, y2, k])
        else:
            L.scale(k, k, y1, k, 0.0)
            L.scale(k, k, y2, k, 0.0)
        self.middle(L, y1, y2, s, ds, 1.0, 0.5, mid, k)
        L.gemm(False, False, m, k, k, 1.0, u, m, mid, k, 0.0, w, m)            # U M
        L.gemm(False, False, m, n, k, 1.0, w, m, vt, k, 0.0, da, lda)          # U M V^T
        if self.vectors(call):
            rows = L.when(b.icmp("sgt", m, k), m)      # (I - U U^T) Ubar S^{-1} V^T
            L.rect("copy_rect", rows, k, du, ldu, r, m)
            L.gemm(False, False, rows, k, k, -1.0, u, m, x1, k, 1.0, r, m)
            L.divide_by(rows, k, r, m, s, 0)
            L.gemm(False, False, rows, n, k, 1.0, r, m, vt, k, 1.0, da, lda)
            cols = L.when(b.icmp("sgt", n, k), n)      # U S^{-1} Vbar^T (I - V V^T)
            L.rect("copy_rect", k, cols, dvt, ldvt, q, k)
            L.gemm(h, False, k, cols, k, -1.0, x2, k, vt, k, 1.0, q, k)
            L.divide_by(k, cols, q, k, s, 1)
            L.gemm(False, False, m, cols, k, 1.0, u, m, q, k, 1.0, da, lda)
            seeded = b.fcmp("one", b.load(L.ft, acc), ConstFloat(L.ft, 0.0))
            L.scale(m, n, da, lda, b.select(seeded, ConstFloat(L.ft, float("nan")), ConstFloat(L.ft, 1.0)))
            L.scale(m, ucols, du, ldu, 0.0)
            L.scale(ldvt, n, dvt, ldvt, 0.0)
        L.scale(k, ConstInt(T.i64, 1), ds, k, 0.0, real=True)

    @staticmethod
    def middle(L, a, bm, s, d, dscale, iscale, out, k) -> None:
        """runtime/matrix.py's svd_middle (on complex data csvd_middle, with `iscale`)."""
        scales = [ConstFloat(L.ft, dscale)] + ([ConstFloat(L.ft, iscale)] if L.cx else [])
        L.helper("csvd_middle" if L.cx else "svd_middle", [k, a, bm, s, d] + scales + [out])

    def tangent(self, fm, call) -> None:
        self.check(fm.has_shadow, call, fm.unsupported)
        if not fm.has_shadow(call.ops[self.a]):
            fm.emit_primal(call)
            return
        ops = [fm.val(o) for o in call.ops]
        L = Lin.forward(self, fm, call, ops[self.kind])
        h = "c" if L.cx else True                    # ^H on complex data
        b = L.b
        m, n, lda = (L.i64(ops[i]) for i in (self.m, self.n, self.lda))
        k = L.smaller(m, n)
        kk = L.bytes(k, k)
        ac, u, vt, s, t1, dp, dpt, mu, mv, t2 = L.scratch(
            L.bytes(m, n), L.bytes(m, k), L.bytes(k, n), L.bytes(k), L.bytes(m, k), kk, kk, kk, kk,
            L.bytes(k, n))
        L.rect("copy_rect", m, n, ops[self.a], lda, ac, m)          # before the call destroys A
        c = fm.emit_primal(call)
        self.thin(L, m, n, k, ac, s, u, vt)
        vectors = self.vectors(call)
        if vectors:
            ldu, ldvt = (L.i64(c.ops[i]) for i in (self.ldu, self.ldvt))
            ucols = self.columns(L, c.ops[self.jobz], m, k)
            rows = L.when(b.icmp("sgt", m, k), m)
            cols = L.when(b.icmp("sgt", n, k), n)
        nan = ConstFloat(L.ft, float("nan"))
        # the real parts of P's diagonal: on complex data, every (2k + 2)-th float
        step = b.add(b.mul(k, ConstInt(T.i64, 2)), ConstInt(T.i64, 1)) if L.cx else k
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            L.gemm(False, h, m, k, n, 1.0, da, lda, vt, k, 0.0, t1, m)             # A' V
            L.gemm(h, False, k, k, m, 1.0, u, m, t1, m, 0.0, dp, k)                # U^T A' V
            L.helper("diagonal", [k, dp, step, fm.shadow(call.ops[self.s], call)[j]])  # s'
            if not vectors:
                continue
            du, dvt = (fm.shadow(call.ops[i], call)[j] for i in (self.u, self.vt))
            L.helper("htransposed" if L.cx else "transposed", [k, dp, k, dpt, k])
            self.middle(L, dp, dpt, s, s, 0.0, 1.0, mu, k)
            self.middle(L, dpt, dp, s, s, 0.0, 0.0, mv, k)
            # U' = U Mu + (I - U U^T) A' V S^{-1}; columns past the k-th: no derivative (nan)
            L.scale(m, ucols, du, ldu, 0.0)
            L.gemm(False, False, rows, k, k, -1.0, u, m, dp, k, 1.0, t1, m)
            L.divide_by(rows, k, t1, m, s, 0)
            L.rect("copy_rect", rows, k, t1, m, du, ldu)
            L.gemm(False, False, m, k, k, 1.0, u, m, mu, k, 1.0, du, ldu)
            L.scale(m, b.sub(ucols, k), L.at(du, ConstInt(T.i64, 0), k, ldu), ldu, nan)
            # V^T' = Mv^T V^T + S^{-1} U^T A' (I - V V^T); rows past the k-th: nan
            L.scale(ldvt, n, dvt, ldvt, 0.0)
            L.gemm(h, False, k, cols, m, 1.0, u, m, da, lda, 0.0, t2, k)
            L.gemm(False, False, k, cols, k, -1.0, dp, k, vt, k, 1.0, t2, k)
            L.divide_by(k, cols, t2, k, s, 1)
            L.rect("copy_rect", k, cols, t2, k, dvt, ldvt)
            L.gemm(h, False, k, n, k, 1.0, mv, k, vt, k, 1.0, dvt, ldvt)
            L.scale(b.sub(ldvt, k), n, L.at(dvt, k, ConstInt(T.i64, 0), ldvt), ldvt, nan)
        L.release()


register_syevd = Syevd.registrar()


register_gesdd = Gesdd.registrar()


def thin_svd():
    """The host's gesdd record (for a derivative that needs an SVD), or None."""
    return next((r for r in BLAS.values() if isinstance(r, Gesdd)), None)
