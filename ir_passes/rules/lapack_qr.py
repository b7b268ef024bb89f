"""LAPACK records for np.linalg.qr (rules/lapack.py has the steps they share and the contract).

np.linalg.qr is two calls: `geqrf(m, n, A, lda, tau)` leaves R (k x n, k = min(m, n)) in A's
upper trapezoid and Householder reflectors below it, then `orgqr(m, k, k, A, lda, tau)` turns
the reflectors into Q (m x k). The kernel reads R between them. Neither call's derivative is
taken alone (the reflectors' would be needed); they go through the pair, found by the matrix they
share: geqrf's tangent computes Q' as well and hands it to orgqr's, orgqr's adjoint hands Qbar to
geqrf's, through a stack slot (forward: a heap block of the lanes' Q', freed by orgqr; reverse:
the arena offset of a copy of Qbar). Q and R are computed again from the saved A. For A = Q R
with m >= n (Walter and Lehmann 2018; Liao et al. 2019), with copyutl(M) = triu(M) + triu(M, 1)^T:
- reverse: N = Rbar R^T - Q^T Qbar, Abar = (Qbar + Q copyutl(N)) R^{-T} (trsm with R);
- tangent: X = Q^T A' R^{-1}, Z = triu(X) + tril(X, -1)^T, R' = Z R, Q' = A' R^{-1} - Q Z.
A wide A = Q [R1 R2] (m < n) splits as [X Y]: X = Q R1 as above, with Qbar + Y R2bar^T for Qbar
in the reverse; Ybar = Q R2bar; R2' = Q'^T Y + Q^T Y'. A singular R1 (rank-deficient A) makes the
triangular solves divide by zero: the derivative, which does not exist there, holds inf or nan.
Complex data (zgeqrf, zungqr): LAPACK's R has a real diagonal, which makes the factors unique;
the steps are the same with ^H for ^T, copyutl(N) the Hermitian matrix N's upper triangle stands
for (real diagonal) and Z = triu(X) + tril(X, -1)^H with Re X on the diagonal (the part of X
that is not skew-Hermitian).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar
from weakref import WeakKeyDictionary

from ..ir import types as T
from ..ir.values import ConstInt
from ..runtime import heap
from .blas import BLAS
from .lapack import Lapack, Lin, as_arg, needs_gemm, primal_ops, roots

ORGQR_PARAMS = [T.i8, T.i64, T.i64, T.i64, T.ptr, T.i64, T.ptr]
# per generated function (its rule context): geqrf call -> the stack slot of the pair
_PAIRS: WeakKeyDictionary = WeakKeyDictionary()


def partner_call(call, record_type):
    """The call of a `record_type` record in call's function on the same matrix, or None."""
    mine = {id(r) for r in roots(call.ops[BLAS[call.callee_name].a])}
    for blk in call.block.function.blocks:
        for i in blk.instructions:
            r = BLAS.get(i.callee_name or "") if i.opcode == "call" else None
            if isinstance(r, record_type) and mine & {id(x) for x in roots(i.ops[r.a])}:
                return i
    return None


def pair_slot(ctx, geqrf_call, make):
    """The stack slot (made by `make` once per generated function, whose rule context is `ctx`)
    the pair's derivatives pass through."""
    slots = _PAIRS.setdefault(ctx, {})
    if id(geqrf_call) not in slots:
        slots[id(geqrf_call)] = make()
    return slots[id(geqrf_call)]


def same_value(x, y) -> bool:
    return x is y or isinstance(x, ConstInt) and isinstance(y, ConstInt) and x.value == y.value


@dataclass(frozen=True)
class Geqrf(Lapack):
    """`geqrf(m, n, A, lda, tau)`; the fields are argument indices."""
    complex_data = True
    m: int = 1
    n: int = 2
    a: int = 3
    lda: int = 4
    tau: int = 5
    WRITES: ClassVar[tuple] = ("a", "tau")
    SHAPES: ClassVar[dict] = {"a": ("m", "n", "lda")}

    def partner(self, call, unsupported):
        """The orgqr call that forms Q from this call's reflectors."""
        needs_gemm(call, unsupported, "trsm")
        o = partner_call(call, Orgqr)
        if o is None:
            raise unsupported(f"`{call.callee_name}` without the call that forms Q from its "
                              "reflectors (as np.linalg.qr makes): their derivative is not computed",
                              call)
        return o

    def factor(self, L, ops, m, n, k, lda, a, tau, q, r) -> None:
        """From the m x n matrix at a (leading dimension lda): R (k x n) into r, Q (m x k) into q
        (a copy of A, destroyed), tau scratch."""
        b, orgqr = L.b, BLAS[self.partner_name]
        L.rect("copy_rect", m, n, a, lda, q, m)
        again = list(ops)
        again[self.m], again[self.n], again[self.lda] = (as_arg(b, ops[i], v) for i, v in
                                                        ((self.m, m), (self.n, n), (self.lda, m)))
        again[self.a], again[self.tau] = q, tau
        b.call(self.name, L.call.type, again)
        L.rect("upper_rect", k, n, q, m, r, k)
        L.module.declare(orgqr.name, L.call.type, ORGQR_PARAMS)
        args = [None] * len(ORGQR_PARAMS)
        for i, v in ((orgqr.kind, L.kind), (orgqr.m, m), (orgqr.n, k), (orgqr.k, k), (orgqr.a, q),
                     (orgqr.lda, m), (orgqr.tau, tau)):
            args[i] = v
        b.call(orgqr.name, L.call.type, args)

    @property
    def partner_name(self) -> str:
        return next(r.name for r in BLAS.values() if isinstance(r, Orgqr))

    def reverse(self, g, call, block, b) -> None:
        self.refuse_constant_output(g.has_shadow, call, g.unsupported)
        if not g.has_shadow(call.ops[self.a]):
            return
        self.partner(call, g.unsupported)
        L = Lin.reverse(self, g, call, b)
        ops = primal_ops(g, call, block, b)
        m, n, lda = (L.i64(ops[i]) for i in (self.m, self.n, self.lda))
        k = L.smaller(m, n)
        extra = b.sub(n, k)
        slot = pair_slot(g, call, lambda: g.stack_slot(T.i64))
        mk, kn, kk = L.bytes(m, k), L.bytes(k, n), L.bytes(k, k)
        q, tau, r, rb, qb, mid, c, bm = L.scratch(L.bytes(m, n), L.bytes(k), kn, kn, mk, kk, kk, mk)
        a0 = self.input(g, call, self.a, block, b, always=True)
        self.factor(L, ops, m, n, k, lda, a0, tau, q, r)
        da = g.shadow_at(call.ops[self.a], block, b)
        h = "c" if L.cx else True                                            # ^H on complex data
        L.rect("upper_rect", k, n, da, lda, rb, k)                           # Rbar
        qbar = b.gep(T.i8, g.arena_base(b), [b.load(T.i64, slot)])  # orgqr's Qbar
        L.rect("copy_rect", m, k, qbar, m, qb, m)
        y, r2b = L.at(a0, L.zero, k, lda), L.at(rb, L.zero, k, k)
        L.gemm(False, h, m, k, extra, 1.0, y, lda, r2b, k, 1.0, qb, m)      # Qbar + Y R2bar^T
        L.gemm(False, h, k, k, k, 1.0, rb, k, r, k, 0.0, mid, k)             # R1bar R1^T
        L.gemm(h, False, k, k, m, -1.0, q, m, qb, m, 1.0, mid, k)            # - Q^T Qbar
        L.helper("hmirror_upper" if L.cx else "mirror_upper", [k, mid, k, c, k])   # copyltu
        L.copy(bm, qb, mk)
        L.gemm(False, False, m, k, k, 1.0, q, m, c, k, 1.0, bm, m)
        L.trsm("R", "U", "C" if L.cx else "T", "N", m, k, r, k, bm, m)     # B R1^{-T}
        L.rect("copy_rect", m, k, bm, m, da, lda)                            # Abar[:, :k]
        L.gemm(False, False, m, extra, k, 1.0, q, m, r2b, k, 0.0, L.at(da, L.zero, k, lda),
               lda)                                                          # Abar[:, k:] = Q R2bar

    def tangent(self, fm, call) -> None:
        self.refuse_constant_output(fm.has_shadow, call, fm.unsupported)
        if not fm.has_shadow(call.ops[self.a]):
            fm.emit_primal(call)
            return
        self.partner(call, fm.unsupported)
        ops = [fm.val(o) for o in call.ops]
        L = Lin.forward(self, fm, call, ops[self.kind])
        b = L.b
        m, n, lda = (L.i64(ops[i]) for i in (self.m, self.n, self.lda))
        k = L.smaller(m, n)
        extra = b.sub(n, k)
        mk, kk = L.bytes(m, k), L.bytes(k, k)
        a0, q, tau, r, t, z = L.scratch(L.bytes(m, n), L.bytes(m, n), L.bytes(k), L.bytes(k, n),
                                        kk, kk)
        L.rect("copy_rect", m, n, ops[self.a], lda, a0, m)          # before the call
        c = fm.emit_primal(call)
        self.factor(L, c.ops, m, n, k, m, a0, tau, q, r)
        dqs = heap.allocate(b, b.mul(mk, ConstInt(T.i64, fm.width)))     # orgqr frees it
        b.store(dqs, pair_slot(fm, call, lambda: fm.entry_slot(T.ptr, "qr.dq")))
        y = L.at(a0, L.zero, k, m)
        h = "c" if L.cx else True                                  # ^H on complex data
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            dq = b.gep(T.i8, dqs, [b.mul(mk, ConstInt(T.i64, j))])
            L.gemm(h, False, k, k, m, 1.0, q, m, da, lda, 0.0, t, k)          # Q^T A1'
            L.trsm("R", "U", "N", "N", k, k, r, k, t, k)                    # X = Q^T A1' R1^{-1}
            L.helper("hfold_upper_zero" if L.cx else "fold_upper_zero", [k, t, k, z, k])  # R1' R1^{-1}
            L.rect("copy_rect", m, k, da, lda, dq, m)
            L.trsm("R", "U", "N", "N", m, k, r, k, dq, m)                   # A1' R1^{-1}
            L.gemm(False, False, m, k, k, -1.0, q, m, z, k, 1.0, dq, m)      # Q'
            L.gemm(False, False, k, k, k, 1.0, z, k, r, k, 0.0, t, k)        # R1'
            r2 = L.at(r, L.zero, k, k)
            dr2 = L.at(da, L.zero, k, lda)                       # A2' in, R2' out
            L.gemm(h, False, k, extra, m, 1.0, q, m, dr2, lda, 0.0, r2, k)      # Q^T A2' (over R2)
            L.gemm(h, False, k, extra, m, 1.0, dq, m, y, m, 1.0, r2, k)         # + Q'^T A2
            L.rect("upper_rect", k, k, t, k, da, lda)                       # R' over A'
            L.scale(b.sub(m, k), k, L.at(da, k, L.zero, lda), lda, 0.0)
            L.rect("copy_rect", k, extra, r2, k, dr2, lda)
        L.release()



@dataclass(frozen=True)
class Orgqr(Lapack):
    """`orgqr(m, n, k, A, lda, tau)` with n = k (Q's first k columns, as np.linalg.qr asks);
    the fields are argument indices."""
    complex_data = True
    m: int = 1
    n: int = 2
    k: int = 3
    a: int = 4
    lda: int = 5
    tau: int = 6
    SHAPES: ClassVar[dict] = {"a": ("m", "n", "lda")}

    def partner(self, call, unsupported):
        if not same_value(call.ops[self.n], call.ops[self.k]):
            raise unsupported(f"`{call.callee_name}` asking for more columns than reflectors", call)
        p = partner_call(call, Geqrf)
        if p is None:
            raise unsupported(f"`{call.callee_name}` on reflectors that no geqrf call in the kernel "
                              "made: their derivative is not computed", call)
        return p

    def reverse(self, g, call, block, b) -> None:
        if not g.has_shadow(call.ops[self.a]):
            return
        geqrf = self.partner(call, g.unsupported)
        L = Lin.reverse(self, g, call, b)
        m, n, lda = (L.i64(g.primal_at(call.ops[i], block, b)) for i in (self.m, self.n, self.lda))
        off, = g.arena_push(b, [L.bytes(m, n)])
        b.store(off, pair_slot(g, geqrf, lambda: g.stack_slot(T.i64)))
        qbar = b.gep(T.i8, g.arena_base(b), [off])
        da = g.shadow_at(call.ops[self.a], block, b)
        L.rect("copy_rect", m, n, da, lda, qbar, m)          # Qbar, for geqrf's adjoint
        L.scale(m, n, da, lda, 0.0)

    def tangent(self, fm, call) -> None:
        c = fm.emit_primal(call)
        if not fm.has_shadow(call.ops[self.a]):
            return
        geqrf = self.partner(call, fm.unsupported)
        L = Lin.forward(self, fm, call, c.ops[self.kind])
        b = L.b
        m, n, lda = (L.i64(c.ops[i]) for i in (self.m, self.n, self.lda))
        dqs = b.load(T.ptr, pair_slot(fm, geqrf, lambda: fm.entry_slot(T.ptr, "qr.dq")))
        for j in range(fm.width):
            dq = b.gep(T.i8, dqs, [b.mul(L.bytes(m, n), ConstInt(T.i64, j))])
            L.rect("copy_rect", m, n, dq, m, fm.shadow(call.ops[self.a], call)[j], lda)
        heap.free(b, dqs)


register_geqrf = Geqrf.registrar()


register_orgqr = Orgqr.registrar()
