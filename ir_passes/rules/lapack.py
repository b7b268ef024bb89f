"""LAPACK records: calls that overwrite their inputs in place, differentiated as a unit, with
matrix-level adjoints that call BLAS and LAPACK themselves (the host's gemm record, the routine
itself), so a gradient stays O(n^3) at library speed.

A LAPACK call mutates its arguments. Its rule follows the two rules of pullbacks for mutating
functions: the values an overwritten argument held before the call are copied into the arena
(rules/blas.py) for the reverse sweep, and the adjoint of a mutated argument is applied only by
mutating its shadow.

`gesv(n, nrhs, A, lda, ipiv, B, ldb)` solves A X = B: A is overwritten by its LU factors, B by X.
- reverse: with dX = shadow(B), Y = A^{-T} dX (gesv on a transposed copy of the saved A, in
  place in shadow(B), which then holds B's adjoint), shadow(A) = -Y X^T (a gemm);
- tangent: X' = A^{-1} (B' - A' X) (a gemm, then gesv on a copy of A).
The LU factors it leaves in A must not be read afterwards (a host's `np.linalg.solve` only frees
them): a kernel that reads them is refused, since their derivative is not computed. A singular A
makes gesv fail, and the primal raises before the reverse sweep runs.

`potrf('U', n, A, lda)` overwrites the upper triangle of A with U, A = U^T U (column-major; it
reads only that triangle, and leaves the strictly lower one as it was):
- reverse: with Ubar = triu(shadow(A)), P = tril(U Ubar^T) with its diagonal halved,
  S = U^{-1} P U^{-T} (two gesv with U), the upper triangle of shadow(A) becomes S + S^T (S on the
  diagonal: the entry stands for both triangles); the lower one passes through (Murray 2016);
- tangent: X = U^{-T} sym(A') U^{-1} (two gesv with U^T), U' = triu(X, diagonal halved) U (gemm).
Only the upper variant is implemented (the one `np.linalg.cholesky` calls).

`getrf(n, n, A, lda, ipiv)` overwrites a square A with its packed LU factors, A = P L U (L unit
lower, U upper, P from the row interchanges ipiv):
- reverse: with Lbar, Ubar the strictly lower and upper parts of shadow(A),
  X = tril(L^T Lbar, -1) + triu(Ubar U^T), shadow(A) = P L^{-T} X U^{-T} (gemm, two gesv, the
  interchanges undone);
- tangent: F = L^{-1} P^T A' U^{-1}, the packed tangent tril(L tril(F, -1), -1) + triu(triu(F) U).
The derivative of the factors is undefined where A is singular (a zero pivot): LAPACK reports
it and the kernel (a slogdet returns -inf) decides; the adjoints then hold inf or nan.

`getri(n, A, lda, ipiv)` overwrites packed LU factors with the inverse V = (P L U)^{-1}:
- reverse: G = -V^T Vbar V^T (the adjoint for the matrix the factors stand for), then the
  factors' adjoints, strictly lower part of P^T G U^T and upper part of L^T P^T G (gemms);
  getrf's reverse turns them back into G;
- tangent: V' = -V A' V with A' = P (L' U + L U') from the factors' tangents (gemms).

`syevd(jobz, uplo, n, A, lda, w)` (behind `np.linalg.eigh`, `eigvalsh`): A = V diag(w) V^T from
one triangle of A; V overwrites A when jobz is 'V' (else A is left undefined):
- reverse: Abar = V (diag(wbar) + F o (V^T Vbar)) V^T with F_ij = 1 / (w_j - w_i), folded onto
  the triangle read; V and w are computed again from the saved A (a syevd, gemms);
- tangent: T = V^T sym(A') V, w' = diag(T), V' = V (F o T).
F is infinite for repeated eigenvalues: there the eigenvectors, and so their derivatives, are not
unique, and the adjoints hold inf or nan unless the eigenvectors' seed is zero (F o T takes 0
where T does: eigvalsh of a matrix with repeated eigenvalues has finite derivatives).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ir.values import ConstFloat, ConstInt, Constant
from ..runtime import heap
from ..runtime.helpers import ensure
from .blas import AFTER, BLAS, GEMM_PARAMS, KINDS, Gemm, Record, arena
from .effects import allocator_or_inactive

N = ord("n")
NULL = Constant(T.ptr, "null")


def _roots(p, seen=None) -> list:
    seen = set() if seen is None else seen
    if id(p) in seen:
        return []
    seen.add(id(p))
    op = getattr(p, "opcode", None)
    if op in ("getelementptr", "bitcast", "addrspacecast"):
        return _roots(p.ops[0], seen)
    if op in ("phi", "select"):
        return [r for o in (p.ops if op == "phi" else p.ops[1:]) for r in _roots(o, seen)]
    return [p]


def read_after(call, p) -> bool:
    """May the memory p points into be read by something that runs after `call` (a load, or a
    call that may read it, other than frees and reference counts)?"""
    roots = {id(r) for r in _roots(p)}
    seen, work = set(), [call.block]
    first = True
    while work:
        blk = work.pop()
        insts = blk.instructions
        start = insts.index(call) + 1 if first and blk is call.block else 0
        first = False
        for i in insts[start:]:
            ptrs = [i.ops[0]] if i.opcode == "load" else \
                [o for o in i.ops if o.type.is_ptr] if i.opcode == "call" and i is not call \
                and not allocator_or_inactive(i.callee_name or "") else []
            if any(id(r) in roots for q in ptrs for r in _roots(q)):
                return True
        for s in blk.instructions[-1].successors():
            if id(s) not in seen:
                seen.add(id(s))
                work.append(s)
    return False


def gemm_record():
    return next((r for r in BLAS.values() if isinstance(r, Gemm)), None)


def call_gemm(b, module, like, kind, ta, tb, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc):
    """A call of the host's gemm (refused by the caller when it registered none)."""
    gemm = gemm_record()
    module.declare(gemm.name, like.type, GEMM_PARAMS)
    new = [None] * len(GEMM_PARAMS)
    flags = (ConstInt(T.i8, ord("t") if ta else N), ConstInt(T.i8, ord("t") if tb else N))
    for i, v in zip((gemm.kind, gemm.transa, gemm.transb, gemm.m, gemm.n, gemm.k, gemm.alpha, gemm.a,
                     gemm.lda, gemm.b, gemm.ldb, gemm.beta, gemm.c, gemm.ldc),
                    (kind,) + flags + (m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)):
        new[i] = v
    b.call(gemm.name, like.type, new)


def _i64(b, v):
    return v if v.type == T.i64 else b.cast("sext", v, T.i64)


@dataclass(frozen=True)
class Gesv(Record):
    """`gesv(n, nrhs, A, lda, ipiv, B, ldb)`; the fields are argument indices."""
    name: str
    kind: int = 0
    n: int = 1
    nrhs: int = 2
    a: int = 3
    lda: int = 4
    ipiv: int = 5
    b: int = 6
    ldb: int = 7

    def output(self, call):
        return call.ops[self.b]

    def outputs(self, call) -> tuple:
        return (call.ops[self.a], call.ops[self.ipiv], call.ops[self.b])

    def inputs(self, call) -> tuple:
        return (self.a, self.b)

    def input_bytes(self, b, ops, k):
        ft = KINDS.get(ops[self.kind].value, T.f64)
        n = _i64(b, ops[self.n])
        ld, cols = (ops[self.lda], n) if k == self.a else (ops[self.ldb], _i64(b, ops[self.nrhs]))
        count = b.add(b.mul(_i64(b, ld), b.sub(cols, ConstInt(T.i64, 1))), n)
        return b.mul(count, ConstInt(T.i64, T.size_of(ft)))

    def check(self, has_shadow, call, unsupported) -> None:
        self.refuse_constant_output(has_shadow, call, unsupported)
        if not (has_shadow(call.ops[self.a]) or has_shadow(call.ops[self.b])):
            return
        if gemm_record() is None:
            raise unsupported(f"`{call.callee_name}` needs a registered gemm for its derivative", call)
        if read_after(call, call.ops[self.a]):
            raise unsupported(f"the LU factors `{call.callee_name}` leaves in its matrix are read "
                              "afterwards; their derivative is not computed", call)

    def reverse(self, g, call, block, b) -> None:
        self.check(g.act.has_shadow, call, g.unsupported)
        if not g.act.has_shadow(call.ops[self.b]):
            return
        ft = self.float_type(g, call)
        size = ConstInt(T.i64, T.size_of(ft))
        n, nrhs = (_i64(b, g.avail.primal(call.ops[i], block, b)) for i in (self.n, self.nrhs))
        lda, ldb = (g.avail.primal(call.ops[i], block, b) for i in (self.lda, self.ldb))
        buf, cap, used = arena(g)
        fields = [g.tape.frame.address(b, f) for f in (buf, cap, used)]
        ensure(g.module, "enzpy.arena_push")
        null = g.null_ptr
        t_off = b.call("enzpy.arena_push", T.i64, fields + [null, b.mul(b.mul(n, n), size)])
        p_off = b.call("enzpy.arena_push", T.i64, fields + [null, b.mul(n, ConstInt(T.i64, 8))])
        base = g.tape.load(b, buf)       # after the pushes: growing may have moved the arena
        a0 = self.input(g, call, self.a, block, b, always=True)
        x = self.input(g, call, (AFTER, self.b), block, b, always=True)
        at, piv = b.gep(T.i8, base, [t_off]), b.gep(T.i8, base, [p_off])
        ensure(g.module, f"enzpy.transpose.{ft.suffix}")
        b.call(f"enzpy.transpose.{ft.suffix}", T.void, [n, a0, _i64(b, lda), at])
        db = g.avail.shadow(call.ops[self.b], block, b)
        ops = [g.avail.primal(o, block, b) if not o.type.is_ptr else null for o in call.ops]
        ops[self.a], ops[self.ipiv], ops[self.b] = at, piv, db
        ops[self.lda] = g.avail.primal(call.ops[self.n], block, b)     # the transposed copy
        b.call(call.callee_name, call.type, ops)          # shadow(B) = A^{-T} dX
        if g.act.has_shadow(call.ops[self.a]):
            da = g.avail.shadow(call.ops[self.a], block, b)
            minus, zero = (_constant_slot(g.alloca_builder, b, ft, v) for v in (-1.0, 0.0))
            call_gemm(b, g.module, call, call.ops[self.kind], False, True, n, n, nrhs, minus, db,
                      _i64(b, ldb), x, _i64(b, ldb), zero, da, _i64(b, lda))

    def tangent(self, fm, call) -> None:
        self.check(fm.has_shadow, call, fm.unsupported)
        if not fm.has_shadow(call.ops[self.b]):
            fm.emit_primal(call)
            return
        ft = self.element_type(call, fm.types)
        b, module = fm.b, fm.module
        ops = [fm.val(o) for o in call.ops]
        n, nrhs = _i64(b, ops[self.n]), _i64(b, ops[self.nrhs])
        abytes = self.input_bytes(b, ops, self.a)
        work = heap.allocate(b, b.add(b.mul(abytes, ConstInt(T.i64, 2)), b.mul(n, ConstInt(T.i64, 8))))
        saved = work
        scratch = b.gep(T.i8, work, [abytes])
        piv = b.gep(T.i8, scratch, [abytes])
        b.call("llvm.memcpy.p0.p0.i64", T.void, [saved, ops[self.a], abytes, ConstInt(T.i1, 0)])
        c = fm.emit_primal(call)
        minus, one = (_constant_slot(None, b, ft, v, fm) for v in (-1.0, 1.0))
        x, ldb, lda = c.ops[self.b], _i64(b, c.ops[self.ldb]), _i64(b, c.ops[self.lda])
        for j in range(fm.width):
            db = fm.shadow(call.ops[self.b], call)[j]
            if fm.has_shadow(call.ops[self.a]):      # B' - A' X
                da = fm.shadow(call.ops[self.a], call)[j]
                call_gemm(b, module, call, c.ops[self.kind], False, False, n, nrhs, n, minus, da, lda,
                          x, ldb, one, db, ldb)
            b.call("llvm.memcpy.p0.p0.i64", T.void, [scratch, saved, abytes, ConstInt(T.i1, 0)])
            again = list(c.ops)
            again[self.a], again[self.ipiv], again[self.b] = scratch, piv, db
            b.call(call.callee_name, call.type, again)   # X' = A^{-1} (B' - A' X)
        heap.free(b, work)


GESV_PARAMS = [T.i8, T.i64, T.i64, T.ptr, T.i64, T.ptr, T.ptr, T.i64]


def call_gesv(b, module, kind, n, nrhs, a, lda, piv, bm, ldb):
    """A call of the host's gesv: bm (n x nrhs) = a^{-1} bm; a and piv are overwritten."""
    gesv = next(r for r in BLAS.values() if isinstance(r, Gesv))
    module.declare(gesv.name, T.i32, GESV_PARAMS)
    new = [None] * len(GESV_PARAMS)
    for i, v in zip((gesv.kind, gesv.n, gesv.nrhs, gesv.a, gesv.lda, gesv.ipiv, gesv.b, gesv.ldb),
                    (kind, n, nrhs, a, lda, piv, bm, ldb)):
        new[i] = v
    b.call(gesv.name, T.i32, new)


def needs_gemm_and_gesv(call, unsupported) -> None:
    if gemm_record() is None or not any(isinstance(r, Gesv) for r in BLAS.values()):
        raise unsupported(f"`{call.callee_name}` needs a registered gemm and gesv for its "
                          "derivative", call)


def square(b, module, name, ft, n, src, lds, dst, ldd):
    """runtime/matrix.py's elementwise map `name` over an n x n matrix."""
    helper = f"enzpy.{name}.{ft.suffix}"
    ensure(module, helper)
    b.call(helper, T.void, [n, src, _i64(b, lds), dst, _i64(b, ldd)])


class Scratch:
    """n x n float matrices and a pivot vector for one adjoint: from the arena in the reverse
    sweep, from the heap (freed by `release`) in forward mode."""

    def __init__(self, b, n, ft, count, g=None):
        self.b, self.g = b, g
        matrix = b.mul(b.mul(n, n), ConstInt(T.i64, T.size_of(ft)))
        pivots = b.mul(n, ConstInt(T.i64, 8))
        if g is not None:
            buf, cap, used = arena(g)
            fields = [g.tape.frame.address(b, f) for f in (buf, cap, used)]
            ensure(g.module, "enzpy.arena_push")
            offs = [b.call("enzpy.arena_push", T.i64, fields + [g.null_ptr, size])
                    for size in [matrix] * count + [pivots]]
            base = g.tape.load(b, buf)    # after the pushes: growing may have moved the arena
            ptrs = [b.gep(T.i8, base, [o]) for o in offs]
        else:
            self.base = heap.allocate(b, b.add(b.mul(matrix, ConstInt(T.i64, count)), pivots))
            ptrs = [b.gep(T.i8, self.base, [b.mul(matrix, ConstInt(T.i64, k))]) for k in range(count + 1)]
        self.matrices, self.pivots = ptrs[:-1], ptrs[-1]

    def release(self) -> None:
        if self.g is None:
            heap.free(self.b, self.base)


@dataclass(frozen=True)
class Potrf(Record):
    """`potrf(uplo, n, A, lda)`; the fields are argument indices."""
    name: str
    kind: int = 0
    uplo: int = 1
    n: int = 2
    a: int = 3
    lda: int = 4

    def output(self, call):
        return call.ops[self.a]

    def inputs(self, call) -> tuple:
        return (self.a,)

    def input_bytes(self, b, ops, k):
        ft = KINDS.get(ops[self.kind].value, T.f64)
        n = _i64(b, ops[self.n])
        count = b.add(b.mul(_i64(b, ops[self.lda]), b.sub(n, ConstInt(T.i64, 1))), n)
        return b.mul(count, ConstInt(T.i64, T.size_of(ft)))

    def check(self, has_shadow, call, unsupported) -> None:
        if not has_shadow(call.ops[self.a]):
            return
        u = call.ops[self.uplo]
        if not isinstance(u, ConstInt) or u.value not in (ord("U"), ord("u")):
            raise unsupported(f"`{call.callee_name}` other than on the upper triangle", call)
        needs_gemm_and_gesv(call, unsupported)

    def reverse(self, g, call, block, b) -> None:
        self.check(g.act.has_shadow, call, g.unsupported)
        if not g.act.has_shadow(call.ops[self.a]):
            return
        ft, m = self.float_type(g, call), g.module
        kind = call.ops[self.kind]
        n = _i64(b, g.avail.primal(call.ops[self.n], block, b))
        lda = _i64(b, g.avail.primal(call.ops[self.lda], block, b))
        sc = Scratch(b, n, ft, 4, g)
        uc, w2, w3, w4 = sc.matrices
        factor = self.input(g, call, (AFTER, self.a), block, b, always=True)
        da = g.avail.shadow(call.ops[self.a], block, b)
        one, zero = (_constant_slot(g.alloca_builder, b, ft, v) for v in (1.0, 0.0))
        nbytes = b.mul(b.mul(n, n), ConstInt(T.i64, T.size_of(ft)))
        square(b, m, "upper_of", ft, n, factor, lda, uc, n)       # U
        square(b, m, "upper_of", ft, n, da, lda, w3, n)           # Ubar
        call_gemm(b, m, call, kind, False, True, n, n, n, one, uc, n, w3, n, zero, w2, n)
        square(b, m, "half_lower", ft, n, w2, n, w2, n)           # P
        b.call("llvm.memcpy.p0.p0.i64", T.void, [w4, uc, nbytes, ConstInt(T.i1, 0)])
        call_gesv(b, m, kind, n, n, w4, n, sc.pivots, w2, n)      # Y = U^{-1} P
        square(b, m, "transposed", ft, n, w2, n, w3, n)
        b.call("llvm.memcpy.p0.p0.i64", T.void, [w4, uc, nbytes, ConstInt(T.i1, 0)])
        call_gesv(b, m, kind, n, n, w4, n, sc.pivots, w3, n)      # S^T = U^{-1} Y^T
        square(b, m, "fold_upper", ft, n, w3, n, da, lda)

    def tangent(self, fm, call) -> None:
        self.check(fm.has_shadow, call, fm.unsupported)
        c = fm.emit_primal(call)
        if not fm.has_shadow(call.ops[self.a]):
            return
        ft, m, b = self.element_type(call, fm.types), fm.module, fm.b
        kind, n, lda = c.ops[self.kind], _i64(b, c.ops[self.n]), _i64(b, c.ops[self.lda])
        sc = Scratch(b, n, ft, 5)
        uc, ut, sym, t1, work = sc.matrices
        one, zero = (_constant_slot(None, b, ft, v, fm) for v in (1.0, 0.0))
        nbytes = b.mul(b.mul(n, n), ConstInt(T.i64, T.size_of(ft)))
        square(b, m, "upper_of", ft, n, c.ops[self.a], lda, uc, n)   # U
        square(b, m, "transposed", ft, n, uc, n, ut, n)             # U^T
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            square(b, m, "mirror_upper", ft, n, da, lda, sym, n)
            b.call("llvm.memcpy.p0.p0.i64", T.void, [work, ut, nbytes, ConstInt(T.i1, 0)])
            call_gesv(b, m, kind, n, n, work, n, sc.pivots, sym, n)     # Z = U^{-T} sym(A')
            square(b, m, "transposed", ft, n, sym, n, t1, n)
            b.call("llvm.memcpy.p0.p0.i64", T.void, [work, ut, nbytes, ConstInt(T.i1, 0)])
            call_gesv(b, m, kind, n, n, work, n, sc.pivots, t1, n)      # X = U^{-T} Z^T
            square(b, m, "half_upper", ft, n, t1, n, t1, n)
            call_gemm(b, m, call, kind, False, False, n, n, n, one, t1, n, uc, n, zero, sym, n)
            square(b, m, "put_upper", ft, n, sym, n, da, lda)          # U' = triu_half(X) U
        sc.release()


@dataclass(frozen=True)
class Getrf(Record):
    """`getrf(m, n, A, lda, ipiv)` with m = n; the fields are argument indices."""
    name: str
    kind: int = 0
    m: int = 1
    n: int = 2
    a: int = 3
    lda: int = 4
    ipiv: int = 5

    def output(self, call):
        return call.ops[self.a]

    def outputs(self, call) -> tuple:
        return (call.ops[self.a], call.ops[self.ipiv])

    def inputs(self, call) -> tuple:
        return (self.a,)

    def input_bytes(self, b, ops, k):
        n = _i64(b, ops[self.n])
        if k == self.ipiv:
            return b.mul(n, ConstInt(T.i64, 4))
        ft = KINDS.get(ops[self.kind].value, T.f64)
        count = b.add(b.mul(_i64(b, ops[self.lda]), b.sub(n, ConstInt(T.i64, 1))), n)
        return b.mul(count, ConstInt(T.i64, T.size_of(ft)))

    def check(self, has_shadow, call, unsupported) -> None:
        if not has_shadow(call.ops[self.a]):
            return
        m, n = call.ops[self.m], call.ops[self.n]
        if m is not n and not (isinstance(m, ConstInt) and isinstance(n, ConstInt) and m.value == n.value):
            raise unsupported(f"`{call.callee_name}` of a matrix that may not be square", call)
        needs_gemm_and_gesv(call, unsupported)

    def reverse(self, g, call, block, b) -> None:
        self.check(g.act.has_shadow, call, g.unsupported)
        if not g.act.has_shadow(call.ops[self.a]):
            return
        ft, m = self.float_type(g, call), g.module
        kind = call.ops[self.kind]
        n = _i64(b, g.avail.primal(call.ops[self.n], block, b))
        lda = _i64(b, g.avail.primal(call.ops[self.lda], block, b))
        sc = Scratch(b, n, ft, 5, g)
        lo, up, x, w, t = sc.matrices
        packed = self.input(g, call, (AFTER, self.a), block, b, always=True)
        ipiv = self.input(g, call, (AFTER, self.ipiv), block, b, always=True)
        da = g.avail.shadow(call.ops[self.a], block, b)
        one, zero = (_constant_slot(g.alloca_builder, b, ft, v) for v in (1.0, 0.0))
        nbytes = b.mul(b.mul(n, n), ConstInt(T.i64, T.size_of(ft)))
        square(b, m, "unit_lower_of", ft, n, packed, lda, lo, n)     # L
        square(b, m, "upper_of", ft, n, packed, lda, up, n)          # U
        square(b, m, "strict_lower_of", ft, n, da, lda, w, n)        # Lbar
        call_gemm(b, m, call, kind, True, False, n, n, n, one, lo, n, w, n, zero, x, n)
        square(b, m, "strict_lower_of", ft, n, x, n, x, n)           # tril(L^T Lbar, -1)
        square(b, m, "upper_of", ft, n, da, lda, w, n)               # Ubar
        call_gemm(b, m, call, kind, False, True, n, n, n, one, w, n, up, n, zero, t, n)
        square(b, m, "put_upper", ft, n, t, n, x, n)                 # X
        square(b, m, "transposed", ft, n, lo, n, w, n)
        call_gesv(b, m, kind, n, n, w, n, sc.pivots, x, n)           # L^{-T} X
        square(b, m, "transposed", ft, n, x, n, t, n)
        b.call("llvm.memcpy.p0.p0.i64", T.void, [w, up, nbytes, ConstInt(T.i1, 0)])
        call_gesv(b, m, kind, n, n, w, n, sc.pivots, t, n)           # (L^{-T} X U^{-T})^T
        square(b, m, "transposed", ft, n, t, n, da, lda)
        helper = f"enzpy.swap_rows.{ft.suffix}"
        ensure(m, helper)
        b.call(helper, T.void, [n, ipiv, da, lda, ConstInt(T.i64, 1)])   # P (...)

    def tangent(self, fm, call) -> None:
        self.check(fm.has_shadow, call, fm.unsupported)
        c = fm.emit_primal(call)
        if not fm.has_shadow(call.ops[self.a]):
            return
        ft, m, b = self.element_type(call, fm.types), fm.module, fm.b
        kind, n, lda = c.ops[self.kind], _i64(b, c.ops[self.n]), _i64(b, c.ops[self.lda])
        sc = Scratch(b, n, ft, 6)
        lo, up, ut, w, t, work = sc.matrices
        one, zero = (_constant_slot(None, b, ft, v, fm) for v in (1.0, 0.0))
        nbytes = b.mul(b.mul(n, n), ConstInt(T.i64, T.size_of(ft)))
        square(b, m, "unit_lower_of", ft, n, c.ops[self.a], lda, lo, n)
        square(b, m, "upper_of", ft, n, c.ops[self.a], lda, up, n)
        square(b, m, "transposed", ft, n, up, n, ut, n)
        helper = f"enzpy.swap_rows.{ft.suffix}"
        ensure(m, helper)
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            square(b, m, "copied", ft, n, da, lda, w, n)
            b.call(helper, T.void, [n, c.ops[self.ipiv], w, n, ConstInt(T.i64, 0)])   # P^T A'
            b.call("llvm.memcpy.p0.p0.i64", T.void, [work, lo, nbytes, ConstInt(T.i1, 0)])
            call_gesv(b, m, kind, n, n, work, n, sc.pivots, w, n)       # L^{-1} P^T A'
            square(b, m, "transposed", ft, n, w, n, t, n)
            b.call("llvm.memcpy.p0.p0.i64", T.void, [work, ut, nbytes, ConstInt(T.i1, 0)])
            call_gesv(b, m, kind, n, n, work, n, sc.pivots, t, n)       # F^T
            square(b, m, "transposed", ft, n, t, n, w, n)               # F
            square(b, m, "strict_lower_of", ft, n, w, n, t, n)
            call_gemm(b, m, call, kind, False, False, n, n, n, one, lo, n, t, n, zero, work, n)
            square(b, m, "strict_lower_of", ft, n, work, n, da, lda)    # tril(L tril(F,-1), -1)
            square(b, m, "upper_of", ft, n, w, n, t, n)
            call_gemm(b, m, call, kind, False, False, n, n, n, one, t, n, up, n, zero, work, n)
            square(b, m, "put_upper", ft, n, work, n, da, lda)          # triu(triu(F) U)
        sc.release()


@dataclass(frozen=True)
class Getri(Record):
    """`getri(n, A, lda, ipiv)`; the fields are argument indices."""
    name: str
    kind: int = 0
    n: int = 1
    a: int = 2
    lda: int = 3
    ipiv: int = 4

    def output(self, call):
        return call.ops[self.a]

    def inputs(self, call) -> tuple:
        return (self.a,)

    input_bytes = Getrf.input_bytes

    def check(self, has_shadow, call, unsupported) -> None:
        if has_shadow(call.ops[self.a]):
            needs_gemm_and_gesv(call, unsupported)

    def reverse(self, g, call, block, b) -> None:
        self.check(g.act.has_shadow, call, g.unsupported)
        if not g.act.has_shadow(call.ops[self.a]):
            return
        ft, m = self.float_type(g, call), g.module
        kind = call.ops[self.kind]
        n = _i64(b, g.avail.primal(call.ops[self.n], block, b))
        lda = _i64(b, g.avail.primal(call.ops[self.lda], block, b))
        sc = Scratch(b, n, ft, 4, g)
        lo, up, t, x = sc.matrices
        packed = self.input(g, call, self.a, block, b, always=True)
        ipiv = self.input(g, call, self.ipiv, block, b, always=True)
        inv = self.input(g, call, (AFTER, self.a), block, b, always=True)
        da = g.avail.shadow(call.ops[self.a], block, b)
        one, minus, zero = (_constant_slot(g.alloca_builder, b, ft, v) for v in (1.0, -1.0, 0.0))
        square(b, m, "unit_lower_of", ft, n, packed, lda, lo, n)
        square(b, m, "upper_of", ft, n, packed, lda, up, n)
        call_gemm(b, m, call, kind, True, False, n, n, n, one, inv, lda, da, lda, zero, t, n)
        call_gemm(b, m, call, kind, False, True, n, n, n, minus, t, n, inv, lda, zero, x, n)   # G
        helper = f"enzpy.swap_rows.{ft.suffix}"
        ensure(m, helper)
        b.call(helper, T.void, [n, ipiv, x, n, ConstInt(T.i64, 0)])                      # P^T G
        call_gemm(b, m, call, kind, False, True, n, n, n, one, x, n, up, n, zero, t, n)
        square(b, m, "strict_lower_of", ft, n, t, n, da, lda)                            # Lbar
        call_gemm(b, m, call, kind, True, False, n, n, n, one, lo, n, x, n, zero, t, n)
        square(b, m, "put_upper", ft, n, t, n, da, lda)                                  # Ubar

    def tangent(self, fm, call) -> None:
        self.check(fm.has_shadow, call, fm.unsupported)
        if not fm.has_shadow(call.ops[self.a]):
            fm.emit_primal(call)
            return
        ft, m, b = self.element_type(call, fm.types), fm.module, fm.b
        ops = [fm.val(o) for o in call.ops]
        kind, n, lda = ops[self.kind], _i64(b, ops[self.n]), _i64(b, ops[self.lda])
        sc = Scratch(b, n, ft, 5)
        lo, up, dl, t, x = sc.matrices
        square(b, m, "unit_lower_of", ft, n, ops[self.a], lda, lo, n)     # before getri
        square(b, m, "upper_of", ft, n, ops[self.a], lda, up, n)
        c = fm.emit_primal(call)
        inv = c.ops[self.a]
        one, minus, zero = (_constant_slot(None, b, ft, v, fm) for v in (1.0, -1.0, 0.0))
        helper = f"enzpy.swap_rows.{ft.suffix}"
        ensure(m, helper)
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            square(b, m, "strict_lower_of", ft, n, da, lda, dl, n)                    # L'
            call_gemm(b, m, call, kind, False, False, n, n, n, one, dl, n, up, n, zero, x, n)
            square(b, m, "upper_of", ft, n, da, lda, dl, n)                           # U'
            call_gemm(b, m, call, kind, False, False, n, n, n, one, lo, n, dl, n, one, x, n)
            b.call(helper, T.void, [n, c.ops[self.ipiv], x, n, ConstInt(T.i64, 1)])  # A'
            call_gemm(b, m, call, kind, False, False, n, n, n, one, inv, lda, x, n, zero, t, n)
            call_gemm(b, m, call, kind, False, False, n, n, n, minus, t, n, inv, lda, zero, da, lda)
        sc.release()


@dataclass(frozen=True)
class Syevd(Record):
    """`syevd(jobz, uplo, n, A, lda, w)`; the fields are argument indices."""
    name: str
    kind: int = 0
    jobz: int = 1
    uplo: int = 2
    n: int = 3
    a: int = 4
    lda: int = 5
    w: int = 6

    def output(self, call):
        return call.ops[self.w]

    def outputs(self, call) -> tuple:
        return (call.ops[self.a], call.ops[self.w])

    def inputs(self, call) -> tuple:
        return (self.a,)

    input_bytes = Potrf.input_bytes

    def flags(self, call, unsupported):
        """(vectors wanted, lower triangle read); refuses flags that are not constants."""
        j, u = call.ops[self.jobz], call.ops[self.uplo]
        if not (isinstance(j, ConstInt) and isinstance(u, ConstInt)) or \
                chr(j.value) not in "VvNn" or chr(u.value) not in "LlUu":
            raise unsupported(f"`{call.callee_name}` with flags that are not constants", call)
        return chr(j.value) in "Vv", chr(u.value) in "Ll"

    def eigen(self, b, module, call, ops, kind, n, v, w):
        """V (in v, which holds a copy of A) and w: a syevd asking for vectors."""
        again = list(ops)
        again[self.kind], again[self.jobz], again[self.n] = kind, ConstInt(T.i8, ord("V")), n
        again[self.a], again[self.lda], again[self.w] = v, n, w
        b.call(call.callee_name, call.type, again)

    def reverse(self, g, call, block, b) -> None:
        self.refuse_constant_output(g.act.has_shadow, call, g.unsupported)
        if not g.act.has_shadow(call.ops[self.a]):
            return
        vectors, lower = self.flags(call, g.unsupported)
        if gemm_record() is None:
            raise g.unsupported(f"`{call.callee_name}` needs a registered gemm for its derivative", call)
        ft, m = self.float_type(g, call), g.module
        kind = call.ops[self.kind]
        n = _i64(b, g.avail.primal(call.ops[self.n], block, b))
        lda = _i64(b, g.avail.primal(call.ops[self.lda], block, b))
        sc = Scratch(b, n, ft, 3, g)
        v, t, x = sc.matrices
        a0 = self.input(g, call, self.a, block, b, always=True)
        ops = [g.avail.primal(o, block, b) if not o.type.is_ptr else g.null_ptr for o in call.ops]
        ops[self.uplo] = call.ops[self.uplo]
        square(b, m, "copied", ft, n, a0, lda, v, n)
        self.eigen(b, m, call, ops, kind, n, v, sc.pivots)
        da = g.avail.shadow(call.ops[self.a], block, b)
        dw = g.avail.shadow(call.ops[self.w], block, b)
        one, zero = (_constant_slot(g.alloca_builder, b, ft, c) for c in (1.0, 0.0))
        if vectors:
            call_gemm(b, m, call, kind, True, False, n, n, n, one, v, n, da, lda, zero, t, n)
        else:
            _scale(b, m, ft, n, n, t, n, 0.0)
        helper = f"enzpy.eig_middle.{ft.suffix}"
        ensure(m, helper)
        b.call(helper, T.void, [n, t, sc.pivots, dw, x])
        call_gemm(b, m, call, kind, False, False, n, n, n, one, v, n, x, n, zero, t, n)
        call_gemm(b, m, call, kind, False, True, n, n, n, one, t, n, v, n, zero, x, n)
        square(b, m, "fold_lower_zero" if lower else "fold_upper_zero", ft, n, x, n, da, lda)
        _scale(b, m, ft, n, ConstInt(T.i64, 1), dw, n, 0.0)

    def tangent(self, fm, call) -> None:
        self.refuse_constant_output(fm.has_shadow, call, fm.unsupported)
        if not fm.has_shadow(call.ops[self.a]):
            fm.emit_primal(call)
            return
        vectors, lower = self.flags(call, fm.unsupported)
        if gemm_record() is None:
            raise fm.unsupported(f"`{call.callee_name}` needs a registered gemm for its derivative", call)
        ft, m, b = self.element_type(call, fm.types), fm.module, fm.b
        ops = [fm.val(o) for o in call.ops]
        kind, n, lda = ops[self.kind], _i64(b, ops[self.n]), _i64(b, ops[self.lda])
        sc = Scratch(b, n, ft, 4)
        v, t, x, sym = sc.matrices
        square(b, m, "copied", ft, n, ops[self.a], lda, v, n)        # before the call
        c = fm.emit_primal(call)
        self.eigen(b, m, call, c.ops, kind, n, v, sc.pivots)
        one, zero = (_constant_slot(None, b, ft, c_, fm) for c_ in (1.0, 0.0))
        helper = f"enzpy.eig_middle.{ft.suffix}"
        ensure(m, helper)
        ensure(m, f"enzpy.diagonal.{ft.suffix}")
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            square(b, m, "mirror_lower" if lower else "mirror_upper", ft, n, da, lda, sym, n)
            call_gemm(b, m, call, kind, True, False, n, n, n, one, v, n, sym, n, zero, x, n)
            call_gemm(b, m, call, kind, False, False, n, n, n, one, x, n, v, n, zero, t, n)   # T
            b.call(f"enzpy.diagonal.{ft.suffix}", T.void,
                   [n, t, n, fm.shadow(call.ops[self.w], call)[j]])                     # w'
            if vectors:
                b.call(helper, T.void, [n, t, sc.pivots, NULL, x])                  # F o T
                call_gemm(b, m, call, kind, False, False, n, n, n, one, v, n, x, n, zero, da, lda)
            else:
                _scale(b, m, ft, n, n, da, lda, 0.0)
        sc.release()


def _scale(b, module, ft, rows, cols, p, ld, value: float) -> None:
    helper = f"enzpy.scale_matrix.{ft.suffix}"
    ensure(module, helper)
    b.call(helper, T.void, [rows, cols, p, _i64(b, ld), ConstFloat(ft, value)])


def register_syevd(name: str, **indices) -> Syevd:
    r = Syevd(name, **indices)
    BLAS[name] = r
    return r


def register_getri(name: str, **indices) -> Getri:
    r = Getri(name, **indices)
    BLAS[name] = r
    return r


def register_getrf(name: str, **indices) -> Getrf:
    r = Getrf(name, **indices)
    BLAS[name] = r
    return r


def register_potrf(name: str, **indices) -> Potrf:
    r = Potrf(name, **indices)
    BLAS[name] = r
    return r


def _constant_slot(alloca_b, b, ft, value, fm=None):
    s = fm.entry_slot(ft, "lapack.c") if fm is not None else alloca_b.alloca(ft)
    b.store(ConstFloat(ft, value), s)
    return s


def register_gesv(name: str, **indices) -> Gesv:
    r = Gesv(name, **indices)
    BLAS[name] = r
    return r
