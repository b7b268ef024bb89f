"""The LAPACK record for the eigenvalues and right eigenvectors of a general real matrix
(rules/lapack.py has the steps LAPACK records share and the contract):

`geev(jobvl, jobvr, n, A, lda, wr, wi, VL, ldvl, VR, ldvr)` on real data (dgeev, sgeev; behind
`np.linalg.eig`, `eigvals` and `roots` of real arrays): wr + i wi get A's eigenvalues, VR its
right eigenvectors when jobvr is 'V' (each of unit 2-norm), A is destroyed. Where every
eigenvalue is real and simple, A = V diag(w) V^{-1} with V real, and with E = V^{-1} A' V and
F_ij = 1 / (w_j - w_i) off the diagonal (0 on it):
- tangent: w' = diag(E), wi' = 0, V' = P - V diag(v_k^T p_k / v_k^T v_k) with P = V (F o E)
  (the projection keeps each eigenvector's unit norm);
- reverse: Pbar = Vbar - V diag(v_k^T vbar_k / v_k^T v_k), Ebar = F o (V^T Pbar) + diag(wbar),
  Abar = V^{-T} Ebar V^T (gemms, getrs 'T' with V's LU factors from the host's getrf).
w, wi, V and V's factors are computed again (jobvr 'V') from the saved A; the eigenvalues come
in the same order. Each eigenvector's sign is LAPACK's choice, constant where the eigenvalues
are simple.
Where the derivative does not exist, the adjoints and tangents hold inf or nan: a repeated
eigenvalue makes F infinite (eigvals stays finite where V is invertible, since F o (...) takes 0
where its argument is 0, as eigh's), a defective one V singular; a complex pair (wi != 0, which
VR stores as real and imaginary parts) makes them all nan: its derivative is not computed.
Left eigenvectors (jobvl 'V') are refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import types as T
from ..ir.values import Constant, ConstFloat, ConstInt
from .lapack import Lapack, Lin, primal_ops
from .lapack_eig import lu_factors, needs_getrf

NULL = Constant(T.ptr, "null")
RGEEV_PARAMS = [T.i8, T.i8, T.i8, T.i64, T.ptr, T.i64, T.ptr, T.ptr, T.ptr, T.i64, T.ptr, T.i64]


@dataclass(frozen=True)
class RealGeev(Lapack):
    """`geev(jobvl, jobvr, n, A, lda, wr, wi, VL, ldvl, VR, ldvr)` on real data; the fields are
    argument indices."""
    jobvl: int = 1
    jobvr: int = 2
    n: int = 3
    a: int = 4
    lda: int = 5
    wr: int = 6
    wi: int = 7
    vl: int = 8
    ldvl: int = 9
    vr: int = 10
    ldvr: int = 11
    RESULT: ClassVar[str] = "wr"
    WRITES: ClassVar[tuple] = ("a", "wr", "wi", "vl", "vr")
    SHAPES: ClassVar[dict] = {"a": ("n", "n", "lda")}

    def flag(self, call, k, letters) -> str | None:
        v = call.ops[k]
        if isinstance(v, ConstInt) and chr(v.value) in letters:
            return chr(v.value).upper()
        return None

    def vectors(self, call) -> bool:
        """Are right eigenvectors computed? (Only a constant 'V' says yes.)"""
        return self.flag(call, self.jobvr, "Vv") == "V"

    def shadowed(self, call) -> tuple:
        more = (call.ops[self.vr],) if self.vectors(call) else ()
        return (call.ops[self.wr], call.ops[self.wi]) + more

    def check(self, has_shadow, call, unsupported):
        """Whether the eigenvectors are differentiated, or None: no derivative to compute."""
        self.refuse_constant_output(has_shadow, call, unsupported)
        if not has_shadow(call.ops[self.a]):
            return None
        if self.flag(call, self.jobvl, "Nn") is None:
            raise unsupported(f"`{call.callee_name}` computing left eigenvectors (or with a jobvl "
                              "that is not a constant): their derivative is not computed", call)
        if self.flag(call, self.jobvr, "NnVv") is None:
            raise unsupported(f"`{call.callee_name}` with a jobvr that is not a constant", call)
        needs_getrf(call, unsupported)
        return self.vectors(call) and has_shadow(call.ops[self.vr])

    def eigen(self, L, n, ac, wr, wi, vr, lu, piv, acc):
        """wr, wi, V (in vr) of the n x n matrix at ac (destroyed), V's LU factors in lu, piv;
        returns nan when an eigenvalue is complex, else 1 (acc: scratch for one float)."""
        L.module.declare(self.name, T.i32, RGEEV_PARAMS)
        args = [None] * len(RGEEV_PARAMS)
        one = ConstInt(T.i64, 1)
        for i, v in ((self.kind, L.kind), (self.jobvl, ConstInt(T.i8, ord("N"))),
                     (self.jobvr, ConstInt(T.i8, ord("V"))), (self.n, n), (self.a, ac),
                     (self.lda, n), (self.wr, wr), (self.wi, wi), (self.vl, lu), (self.ldvl, one),
                     (self.vr, vr), (self.ldvr, n)):
            args[i] = v
        L.b.call(self.name, T.i32, args)
        lu_factors(L, n, vr, lu, piv)
        b, zero = L.b, ConstFloat(L.ft, 0.0)
        b.store(zero, acc)
        L.sum_abs(n, one, wi, n, acc)
        pair = b.fcmp("one", b.load(L.ft, acc), zero)
        return b.select(pair, ConstFloat(L.ft, float("nan")), ConstFloat(L.ft, 1.0))

    @staticmethod
    def project(L, n, vr, p, ldp, dots, norms) -> None:
        """p_k -= v_k (v_k^T p_k / v_k^T v_k) for each column k (norms: -v_k^T v_k)."""
        one = ConstInt(T.i64, 1)
        L.scale(n, one, dots, n, 0.0)
        L.helper("col_dots", [n, n, vr, n, p, ldp, dots])
        L.helper("add_scaled_cols", [n, n, vr, n, p, ldp, dots, norms])

    @staticmethod
    def norms(L, n, vr, out) -> None:
        """out_k = -v_k^T v_k."""
        one = ConstInt(T.i64, 1)
        L.scale(n, one, out, n, 0.0)
        L.helper("col_dots", [n, n, vr, n, vr, n, out])
        L.scale(n, one, out, n, -1.0)

    def reverse(self, g, call, block, b) -> None:
        vectors = self.check(g.has_shadow, call, g.unsupported)
        if vectors is None:
            return
        L = Lin.reverse(self, g, call, b)
        ops = primal_ops(g, call, block, b)
        n, lda = L.i64(ops[self.n]), L.i64(ops[self.lda])
        nn, nb, one = L.bytes(n, n), L.bytes(n), ConstInt(T.i64, 1)
        ac, vr, lu, x, t, wr, wi, dots, norms, acc, piv = L.scratch(
            nn, nn, nn, nn, nn, nb, nb, nb, nb, L.size, L.pivots(n))
        a0 = self.input(g, call, self.a, block, b, always=True)
        L.rect("copy_rect", n, n, a0, lda, ac, n)
        valid = self.eigen(L, n, ac, wr, wi, vr, lu, piv, acc)
        da = g.shadow_at(call.ops[self.a], block, b)
        dw = g.shadow_at(call.ops[self.wr], block, b)
        if vectors:
            dv, ldv = g.shadow_at(call.ops[self.vr], block, b), L.i64(ops[self.ldvr])
            L.rect("copy_rect", n, n, dv, ldv, x, n)
            self.norms(L, n, vr, norms)
            self.project(L, n, vr, x, n, dots, norms)                         # Pbar
            L.gemm(True, False, n, n, n, 1.0, vr, n, x, n, 0.0, t, n)         # V^T Pbar
            L.scale(n, n, dv, ldv, 0.0)
        else:
            L.scale(n, n, t, n, 0.0)
        L.helper("eig_middle", [n, t, wr, dw, x])                             # Ebar
        L.gemm(False, True, n, n, n, 1.0, x, n, vr, n, 0.0, t, n)             # Ebar V^T
        L.getrs("T", n, n, lu, n, piv, t, n)                                  # V^{-T} ...
        L.rect("copy_rect", n, n, t, n, da, lda)
        L.scale(n, n, da, lda, valid)
        L.scale(n, one, dw, n, 0.0)
        if g.has_shadow(call.ops[self.wi]):
            L.scale(n, one, g.shadow_at(call.ops[self.wi], block, b), n, 0.0)

    def tangent(self, fm, call) -> None:
        vectors = self.check(fm.has_shadow, call, fm.unsupported)
        if vectors is None:
            fm.emit_primal(call)
            return
        ops = [fm.val(o) for o in call.ops]
        L = Lin.forward(self, fm, call, ops[self.kind])
        n, lda = L.i64(ops[self.n]), ops[self.lda]
        nn, nb, one = L.bytes(n, n), L.bytes(n), ConstInt(T.i64, 1)
        ac, vr, lu, t, x, wr, wi, dots, norms, acc, piv = L.scratch(
            nn, nn, nn, nn, nn, nb, nb, nb, nb, L.size, L.pivots(n))
        L.rect("copy_rect", n, n, ops[self.a], lda, ac, n)           # before the call
        c = fm.emit_primal(call)
        valid = self.eigen(L, n, ac, wr, wi, vr, lu, piv, acc)
        if vectors:
            self.norms(L, n, vr, norms)
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            dw = fm.shadow(call.ops[self.wr], call)[j]
            L.gemm(False, False, n, n, n, 1.0, da, lda, vr, n, 0.0, t, n)   # A' V
            L.getrs("N", n, n, lu, n, piv, t, n)                            # E = V^{-1} A' V
            L.helper("diagonal", [n, t, n, dw])                             # w'
            L.scale(n, one, dw, n, valid)
            if fm.has_shadow(call.ops[self.wi]):                           # wi' = 0
                dwi = fm.shadow(call.ops[self.wi], call)[j]
                L.scale(n, one, dwi, n, 0.0)
                L.scale(n, one, dwi, n, valid)
            if vectors:
                dv, ldv = fm.shadow(call.ops[self.vr], call)[j], c.ops[self.ldvr]
                L.helper("eig_middle", [n, t, wr, NULL, x])                 # F o E
                L.gemm(False, False, n, n, n, 1.0, vr, n, x, n, 0.0, dv, ldv)   # P
                self.project(L, n, vr, dv, ldv, dots, norms)                # V'
                L.scale(n, n, dv, ldv, valid)
            L.scale(n, n, da, lda, 0.0)                                      # A is destroyed
        L.release()


register_real_geev = RealGeev.registrar()
