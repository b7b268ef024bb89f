"""The LAPACK record for the eigenvalues of a general complex matrix (rules/lapack.py has the
steps LAPACK records share and the contract):

`geev(jobvl, jobvr, n, A, lda, w, VL, ldvl, VR, ldvr)` on complex data (behind `np.linalg.eigvals`
and `roots` of complex arrays): w gets A's eigenvalues, A is destroyed. Each eigenvalue is a
complex-analytic function of A where it is simple: with A = V diag(w) V^{-1} (V: right
eigenvectors, from a geev asking for them on the saved A, whose eigenvalues come in the same
order),
- reverse: Abar = V^{-H} diag(wbar) V^H (a gemm, V's LU factors from the host's getrf, getrs 'C');
- tangent: w' = diag(V^{-1} A' V) (a gemm, getrs 'N').
A repeated eigenvalue with too few eigenvectors makes V singular: the derivative does not exist
there, and the adjoints hold inf or nan. Eigenvectors (jobvr 'V', `np.linalg.eig`) are refused:
their derivative is not computed. Real matrices call another routine (rgeev,
rules/lapack_eig_real.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import types as T
from ..ir.values import Constant, ConstInt
from .blas import BLAS
from .lapack import Lapack, Lin, needs_gemm, primal_ops
from .lapack_lu import Getrf

NULL = Constant(T.ptr, "null")
GEEV_PARAMS = [T.i8, T.i8, T.i8, T.i64, T.ptr, T.i64, T.ptr, T.ptr, T.i64, T.ptr, T.i64]
GETRF_PARAMS = [T.i8, T.i64, T.i64, T.ptr, T.i64, T.ptr]


def needs_getrf(call, unsupported) -> None:
    """Refuses a call whose derivative solves with V (the host's gemm, getrs and getrf)."""
    needs_gemm(call, unsupported, "getrs")
    if not any(isinstance(r, Getrf) for r in BLAS.values()):
        raise unsupported(f"`{call.callee_name}` needs a registered getrf for its derivative", call)


def lu_factors(L, n, v, lu, piv) -> None:
    """lu, piv: the LU factors of the n x n matrix at v (the host's getrf on a copy)."""
    L.rect("copy_rect", n, n, v, n, lu, n)
    getrf = next(r for r in BLAS.values() if isinstance(r, Getrf))
    L.module.declare(getrf.name, T.i32, GETRF_PARAMS)
    args = [None] * len(GETRF_PARAMS)
    for i, val in ((getrf.kind, L.kind), (getrf.m, n), (getrf.n, n), (getrf.a, lu),
                   (getrf.lda, n), (getrf.ipiv, piv)):
        args[i] = val
    L.b.call(getrf.name, T.i32, args)


@dataclass(frozen=True)
class Geev(Lapack):
    """`geev(jobvl, jobvr, n, A, lda, w, VL, ldvl, VR, ldvr)` on complex data; the fields are
    argument indices."""
    complex_data = True
    jobvl: int = 1
    jobvr: int = 2
    n: int = 3
    a: int = 4
    lda: int = 5
    w: int = 6
    vl: int = 7
    ldvl: int = 8
    vr: int = 9
    ldvr: int = 10
    RESULT: ClassVar[str] = "w"
    WRITES: ClassVar[tuple] = ("a", "w", "vl", "vr")
    SHADOWED: ClassVar[tuple] = ("w",)
    SHAPES: ClassVar[dict] = {"a": ("n", "n", "lda")}

    def check(self, has_shadow, call, unsupported) -> bool:
        """Has the call a derivative to compute?"""
        self.refuse_constant_output(has_shadow, call, unsupported)
        if not has_shadow(call.ops[self.a]):
            return False
        if not self.is_complex(call):
            raise unsupported(self.no_type(call), call)
        for k in (self.jobvl, self.jobvr):
            v = call.ops[k]
            if not isinstance(v, ConstInt) or chr(v.value) not in "Nn":
                raise unsupported(f"`{call.callee_name}` computing eigenvectors "
                                  "(np.linalg.eig of a complex matrix): their derivative is not "
                                  "computed (np.linalg.eigvals is differentiated)", call)
        needs_getrf(call, unsupported)
        return True

    def eigen(self, L, n, ac, w, vr, lu, piv) -> None:
        """w and V (in vr) of the n x n matrix at ac (destroyed), V's LU factors in lu, piv."""
        L.module.declare(self.name, T.i32, GEEV_PARAMS)
        args = [None] * len(GEEV_PARAMS)
        one = ConstInt(T.i64, 1)
        for i, v in ((self.kind, L.kind), (self.jobvl, ConstInt(T.i8, ord("N"))),
                     (self.jobvr, ConstInt(T.i8, ord("V"))), (self.n, n), (self.a, ac),
                     (self.lda, n), (self.w, w), (self.vl, lu), (self.ldvl, one), (self.vr, vr),
                     (self.ldvr, n)):
            args[i] = v
        L.b.call(self.name, T.i32, args)
        lu_factors(L, n, vr, lu, piv)

    @staticmethod
    def diagonal(L, n, src, dst, into) -> None:
        """Complex vector dst = diag(src) (n x n), or diag(dst) = src when `into`: a copy of
        2 x n parts at strides 2 and 2n + 2."""
        wide = L.b.add(L.b.mul(n, ConstInt(T.i64, 2)), ConstInt(T.i64, 2))
        two = ConstInt(T.i64, 2)
        lds, ldd = (two, wide) if into else (wide, two)
        L.helper("copy_rect", [two, n, src, lds, dst, ldd])

    def reverse(self, g, call, block, b) -> None:
        if not self.check(g.has_shadow, call, g.unsupported):
            return
        L = Lin.reverse(self, g, call, b)
        ops = primal_ops(g, call, block, b)
        n, lda = L.i64(ops[self.n]), L.i64(ops[self.lda])
        nn = L.bytes(n, n)
        ac, vr, lu, d, w, piv = L.scratch(nn, nn, nn, nn, L.bytes(n), L.pivots(n))
        a0 = self.input(g, call, self.a, block, b, always=True)
        L.rect("copy_rect", n, n, a0, lda, ac, n)
        self.eigen(L, n, ac, w, vr, lu, piv)
        da = g.shadow_at(call.ops[self.a], block, b)
        dw = g.shadow_at(call.ops[self.w], block, b)
        L.scale(n, n, d, n, 0.0)
        self.diagonal(L, n, dw, d, True)                                     # diag(wbar)
        L.gemm(False, "c", n, n, n, 1.0, d, n, vr, n, 0.0, ac, n)            # diag(wbar) V^H
        L.getrs("C", n, n, lu, n, piv, ac, n)                                # V^{-H} ...
        L.rect("copy_rect", n, n, ac, n, da, lda)
        L.scale(n, ConstInt(T.i64, 1), dw, n, 0.0)

    def tangent(self, fm, call) -> None:
        if not self.check(fm.has_shadow, call, fm.unsupported):
            fm.emit_primal(call)
            return
        ops = [fm.val(o) for o in call.ops]
        L = Lin.forward(self, fm, call, ops[self.kind])
        n, lda = L.i64(ops[self.n]), ops[self.lda]
        nn = L.bytes(n, n)
        ac, vr, lu, t, w, piv = L.scratch(nn, nn, nn, nn, L.bytes(n), L.pivots(n))
        L.rect("copy_rect", n, n, ops[self.a], lda, ac, n)           # before the call
        fm.emit_primal(call)
        self.eigen(L, n, ac, w, vr, lu, piv)
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            L.gemm(False, False, n, n, n, 1.0, da, lda, vr, n, 0.0, t, n)   # A' V
            L.getrs("N", n, n, lu, n, piv, t, n)                            # V^{-1} A' V
            self.diagonal(L, n, t, fm.shadow(call.ops[self.w], call)[j], False)
            L.scale(n, n, da, lda, 0.0)                                      # A is destroyed
        L.release()


register_geev = Geev.registrar()
