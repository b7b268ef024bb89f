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
from weakref import WeakKeyDictionary

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
        square(b, g.module, "transposed", ft, n, a0, lda, at, n)
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


# --- the steps the matrix-level derivatives share


class Lin:
    """Emits the steps of one matrix-level adjoint or tangent on float type ft: the host's gemm
    and gesv, runtime/matrix.py's helpers, constants in stack slots, scratch memory (the arena in
    the reverse sweep, the heap in forward mode)."""

    def __init__(self, b, module, call, kind, ft, slot, g=None):
        self.b, self.module, self.call, self.kind, self.ft = b, module, call, kind, ft
        self.g, self._slot, self._consts, self._heap = g, slot, {}, []
        self.size = ConstInt(T.i64, T.size_of(ft))

    @classmethod
    def reverse(cls, record, g, call, b) -> "Lin":
        ft = record.float_type(g, call)
        return cls(b, g.module, call, call.ops[record.kind], ft, lambda: g.alloca_builder.alloca(ft), g)

    @classmethod
    def forward(cls, record, fm, call, kind) -> "Lin":
        ft = record.element_type(call, fm.types)
        if ft is None:
            raise fm.unsupported(f"`{call.callee_name}` on data of unknown float type", call)
        return cls(fm.b, fm.module, call, kind, ft, lambda: fm.entry_slot(ft, "lapack.c"))

    def const(self, value: float):
        """A stack slot holding `value` (gemm's alpha and beta)."""
        if value not in self._consts:
            s = self._slot()
            self.b.store(ConstFloat(self.ft, value), s)
            self._consts[value] = s
        return self._consts[value]

    def i64(self, v):
        return _i64(self.b, v)

    def smaller(self, x, y):
        return self.b.select(self.b.icmp("slt", x, y), x, y)

    def rows_if(self, more, count):
        """`count` when `more`, else 0 (a step that vanishes for square matrices)."""
        return self.b.select(more, count, ConstInt(T.i64, 0))

    def bytes(self, *dims):
        v = self.size
        for d in dims:
            v = self.b.mul(v, d)
        return v

    def at(self, p, rows, cols, ld):
        """The address of element (rows, cols) of the matrix at p."""
        return self.b.gep(T.i8, p, [self.bytes(self.b.add(self.b.mul(cols, ld), rows))])

    def scratch(self, *sizes) -> list:
        """Blocks of `sizes` bytes (i64 values) for this derivative."""
        b = self.b
        if self.g is not None:
            g = self.g
            buf, cap, used = arena(g)
            fields = [g.tape.frame.address(b, f) for f in (buf, cap, used)]
            ensure(self.module, "enzpy.arena_push")
            offs = [b.call("enzpy.arena_push", T.i64, fields + [g.null_ptr, s]) for s in sizes]
            base = g.tape.load(b, buf)    # after the pushes: growing may have moved the arena
            return [b.gep(T.i8, base, [o]) for o in offs]
        total, offs = ConstInt(T.i64, 0), []
        for s in sizes:
            offs.append(total)
            rounded = b.binop("and", b.add(s, ConstInt(T.i64, 15)), ConstInt(T.i64, -16))
            total = b.add(total, rounded)      # 16-byte aligned blocks
        base = heap.allocate(b, total)
        self._heap.append(base)
        return [b.gep(T.i8, base, [o]) for o in offs]

    def release(self) -> None:
        for p in self._heap:
            heap.free(self.b, p)
        self._heap = []

    def gemm(self, ta, tb, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc) -> None:
        """c = alpha op(a) op(bm) + beta c (alpha, beta: floats)."""
        call_gemm(self.b, self.module, self.call, self.kind, ta, tb, m, n, k, self.const(alpha), a,
                  self.i64(lda), bm, self.i64(ldb), self.const(beta), c, self.i64(ldc))

    def solve(self, n, a, work, piv, bm, ldb, nrhs=None) -> None:
        """bm = a^{-1} bm for an n x n matrix a (leading dimension n), factored in `work`."""
        self.copy(work, a, self.bytes(n, n))
        call_gesv(self.b, self.module, self.kind, n, n if nrhs is None else nrhs, work, n, piv, bm,
                  self.i64(ldb))

    def copy(self, dst, src, nbytes) -> None:
        self.b.call("llvm.memcpy.p0.p0.i64", T.void, [dst, src, nbytes, ConstInt(T.i1, 0)])

    def helper(self, name, args, ret=T.void):
        """A call of runtime/matrix.py's `enzpy.<name>.<suffix>`."""
        full = f"enzpy.{name}.{self.ft.suffix}"
        ensure(self.module, full)
        return self.b.call(full, ret, [self.i64(a) if a.type.is_int and a.type != T.i1 and
                                       a.type != T.i64 else a for a in args])

    def map(self, name, n, src, lds, dst, ldd) -> None:
        """The elementwise map `name` of an n x n matrix (runtime/matrix.py's SQUARE_BODIES)."""
        self.helper(name, [n, src, self.i64(lds), dst, self.i64(ldd)])

    def scale(self, rows, cols, p, ld, value) -> None:
        """p *= value (a float, or a value of type ft); 0 stores zeros."""
        v = ConstFloat(self.ft, value) if isinstance(value, float) else value
        self.helper("scale_matrix", [rows, cols, p, self.i64(ld), v])

    def swap_rows(self, n, ipiv, p, ld, back: bool) -> None:
        self.helper("swap_rows", [n, ipiv, p, self.i64(ld), ConstInt(T.i64, int(back))])


def _arg(b, like, v):
    """v (an i64) as an argument of like's type."""
    return v if like.type == v.type else b.cast("trunc", v, like.type)


@dataclass(frozen=True)
class Gesdd(Record):
    """`gesdd(jobz, m, n, A, lda, s, U, ldu, VT, ldvt)`; the fields are argument indices."""
    name: str
    kind: int = 0
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

    def output(self, call):
        return call.ops[self.s]

    def vectors(self, call) -> bool:
        """Are U and V^T computed? (Only a constant 'N' says no.)"""
        j = call.ops[self.jobz]
        return not (isinstance(j, ConstInt) and chr(j.value) in "Nn")

    def outputs(self, call) -> tuple:
        more = (call.ops[self.u], call.ops[self.vt]) if self.vectors(call) else ()
        return (call.ops[self.a], call.ops[self.s]) + more

    def shadowed(self, call) -> tuple:
        return (call.ops[self.s],) + ((call.ops[self.u], call.ops[self.vt]) if self.vectors(call) else ())

    def inputs(self, call) -> tuple:
        return (self.a,)

    def input_bytes(self, b, ops, k):
        ft = KINDS.get(ops[self.kind].value, T.f64)
        m, n = _i64(b, ops[self.m]), _i64(b, ops[self.n])
        count = b.add(b.mul(_i64(b, ops[self.lda]), b.sub(n, ConstInt(T.i64, 1))), m)
        return b.mul(count, ConstInt(T.i64, T.size_of(ft)))

    def check(self, has_shadow, call, unsupported) -> None:
        self.refuse_constant_output(has_shadow, call, unsupported)
        if has_shadow(call.ops[self.a]) and gemm_record() is None:
            raise unsupported(f"`{call.callee_name}` needs a registered gemm for its derivative", call)

    def thin(self, L, ops, m, n, k, a, s, u, vt) -> None:
        """The thin SVD of the m x n matrix at a (destroyed): s, U (m x k), V^T (k x n)."""
        b = L.b
        again = list(ops)
        again[self.jobz] = ConstInt(ops[self.jobz].type, ord("S"))
        for i, v in ((self.m, m), (self.n, n), (self.lda, m), (self.ldu, m), (self.ldvt, k)):
            again[i] = _arg(b, ops[i], v)
        again[self.a], again[self.s], again[self.u], again[self.vt] = a, s, u, vt
        b.call(self.name, L.call.type, again)

    def columns(self, L, jobz, m, k):
        """The columns of U (rows of V^T) the call computed: min(m, n), or m for jobz 'A'."""
        b = L.b
        full = b.icmp("eq", _i64(b, jobz), ConstInt(T.i64, ord("A")))
        return b.select(full, m, k)

    def reverse(self, g, call, block, b) -> None:
        self.check(g.act.has_shadow, call, g.unsupported)
        if not g.act.has_shadow(call.ops[self.a]):
            return
        L = Lin.reverse(self, g, call, b)
        ops = [g.avail.primal(o, block, b) if not o.type.is_ptr else g.null_ptr for o in call.ops]
        m, n, lda = (L.i64(ops[i]) for i in (self.m, self.n, self.lda))
        k = L.smaller(m, n)
        mk, kn, kk = L.bytes(m, k), L.bytes(k, n), L.bytes(k, k)
        ac, u, vt, s, x1, x2, y1, y2, mid, w, r, q, acc = L.scratch(
            L.bytes(m, n), mk, kn, L.bytes(k), kk, kk, kk, kk, kk, mk, mk, kn, L.size)
        a0 = self.input(g, call, self.a, block, b, always=True)
        L.helper("copy_rect", [m, n, a0, lda, ac, m])
        self.thin(L, ops, m, n, k, ac, s, u, vt)
        da = g.avail.shadow(call.ops[self.a], block, b)
        ds = g.avail.shadow(call.ops[self.s], block, b)
        if self.vectors(call):
            du, dvt = (g.avail.shadow(call.ops[i], block, b) for i in (self.u, self.vt))
            ldu, ldvt = (L.i64(ops[i]) for i in (self.ldu, self.ldvt))
            ucols = self.columns(L, ops[self.jobz], m, k)
            b.store(ConstFloat(L.ft, 0.0), acc)      # seeds on columns of U past the k-th
            L.helper("sum_abs", [m, b.sub(ucols, k), L.at(du, ConstInt(T.i64, 0), k, ldu), ldu, acc])
            L.helper("sum_abs", [b.sub(ldvt, k), n, L.at(dvt, k, ConstInt(T.i64, 0), ldvt), ldvt, acc])
            L.gemm(True, False, k, k, m, 1.0, u, m, du, ldu, 0.0, x1, k)       # U^T Ubar
            L.gemm(False, True, k, k, n, 1.0, vt, k, dvt, ldvt, 0.0, x2, k)    # V^T Vbar
            L.map("antisym", k, x1, k, y1, k)
            L.map("antisym", k, x2, k, y2, k)
        else:
            L.scale(k, k, y1, k, 0.0)
            L.scale(k, k, y2, k, 0.0)
        L.helper("svd_middle", [k, y1, y2, s, ds, ConstFloat(L.ft, 1.0), mid])
        L.gemm(False, False, m, k, k, 1.0, u, m, mid, k, 0.0, w, m)            # U M
        L.gemm(False, False, m, n, k, 1.0, w, m, vt, k, 0.0, da, lda)          # U M V^T
        if self.vectors(call):
            rows = L.rows_if(b.icmp("sgt", m, k), m)      # (I - U U^T) Ubar S^{-1} V^T
            L.helper("copy_rect", [rows, k, du, ldu, r, m])
            L.gemm(False, False, rows, k, k, -1.0, u, m, x1, k, 1.0, r, m)
            L.helper("divide_by", [rows, k, r, m, s, ConstInt(T.i64, 0)])
            L.gemm(False, False, rows, n, k, 1.0, r, m, vt, k, 1.0, da, lda)
            cols = L.rows_if(b.icmp("sgt", n, k), n)      # U S^{-1} Vbar^T (I - V V^T)
            L.helper("copy_rect", [k, cols, dvt, ldvt, q, k])
            L.gemm(True, False, k, cols, k, -1.0, x2, k, vt, k, 1.0, q, k)
            L.helper("divide_by", [k, cols, q, k, s, ConstInt(T.i64, 1)])
            L.gemm(False, False, m, cols, k, 1.0, u, m, q, k, 1.0, da, lda)
            seeded = b.fcmp("one", b.load(L.ft, acc), ConstFloat(L.ft, 0.0))
            L.scale(m, n, da, lda, b.select(seeded, ConstFloat(L.ft, float("nan")), ConstFloat(L.ft, 1.0)))
            L.scale(m, ucols, du, ldu, 0.0)
            L.scale(ldvt, n, dvt, ldvt, 0.0)
        L.scale(k, ConstInt(T.i64, 1), ds, k, 0.0)

    def tangent(self, fm, call) -> None:
        self.check(fm.has_shadow, call, fm.unsupported)
        if not fm.has_shadow(call.ops[self.a]):
            fm.emit_primal(call)
            return
        ops = [fm.val(o) for o in call.ops]
        L = Lin.forward(self, fm, call, ops[self.kind])
        b = L.b
        m, n, lda = (L.i64(ops[i]) for i in (self.m, self.n, self.lda))
        k = L.smaller(m, n)
        kk = L.bytes(k, k)
        ac, u, vt, s, t1, dp, dpt, mu, mv, t2 = L.scratch(
            L.bytes(m, n), L.bytes(m, k), L.bytes(k, n), L.bytes(k), L.bytes(m, k), kk, kk, kk, kk,
            L.bytes(k, n))
        L.helper("copy_rect", [m, n, ops[self.a], lda, ac, m])      # before the call destroys A
        c = fm.emit_primal(call)
        self.thin(L, c.ops, m, n, k, ac, s, u, vt)
        vectors = self.vectors(call)
        if vectors:
            ldu, ldvt = (L.i64(c.ops[i]) for i in (self.ldu, self.ldvt))
            ucols = self.columns(L, c.ops[self.jobz], m, k)
            rows = L.rows_if(b.icmp("sgt", m, k), m)
            cols = L.rows_if(b.icmp("sgt", n, k), n)
        nan = ConstFloat(L.ft, float("nan"))
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            L.gemm(False, True, m, k, n, 1.0, da, lda, vt, k, 0.0, t1, m)          # A' V
            L.gemm(True, False, k, k, m, 1.0, u, m, t1, m, 0.0, dp, k)             # U^T A' V
            L.helper("diagonal", [k, dp, k, fm.shadow(call.ops[self.s], call)[j]])  # s'
            if not vectors:
                continue
            du, dvt = (fm.shadow(call.ops[i], call)[j] for i in (self.u, self.vt))
            L.map("transposed", k, dp, k, dpt, k)
            zero = ConstFloat(L.ft, 0.0)
            L.helper("svd_middle", [k, dp, dpt, s, s, zero, mu])
            L.helper("svd_middle", [k, dpt, dp, s, s, zero, mv])
            # U' = U Mu + (I - U U^T) A' V S^{-1}; columns past the k-th: no derivative (nan)
            L.scale(m, ucols, du, ldu, 0.0)
            L.gemm(False, False, rows, k, k, -1.0, u, m, dp, k, 1.0, t1, m)
            L.helper("divide_by", [rows, k, t1, m, s, ConstInt(T.i64, 0)])
            L.helper("copy_rect", [rows, k, t1, m, du, ldu])
            L.gemm(False, False, m, k, k, 1.0, u, m, mu, k, 1.0, du, ldu)
            L.scale(m, b.sub(ucols, k), L.at(du, ConstInt(T.i64, 0), k, ldu), ldu, nan)
            # V^T' = Mv^T V^T + S^{-1} U^T A' (I - V V^T); rows past the k-th: nan
            L.scale(ldvt, n, dvt, ldvt, 0.0)
            L.gemm(True, False, k, cols, m, 1.0, u, m, da, lda, 0.0, t2, k)
            L.gemm(False, False, k, cols, k, -1.0, dp, k, vt, k, 1.0, t2, k)
            L.helper("divide_by", [k, cols, t2, k, s, ConstInt(T.i64, 1)])
            L.helper("copy_rect", [k, cols, t2, k, dvt, ldvt])
            L.gemm(True, False, k, n, k, 1.0, mv, k, vt, k, 1.0, dvt, ldvt)
            L.scale(b.sub(ldvt, k), n, L.at(dvt, k, ConstInt(T.i64, 0), ldvt), ldvt, nan)
        L.release()


def register_gesdd(name: str, **indices) -> Gesdd:
    r = Gesdd(name, **indices)
    BLAS[name] = r
    return r


# np.linalg.qr is two calls: geqrf leaves R in A's upper trapezoid and Householder reflectors
# below it, orgqr turns the reflectors into Q. The kernel reads R between them. Their
# derivatives go through the pair: geqrf's tangent computes Q' as well and hands it to orgqr,
# orgqr's adjoint hands Qbar back to geqrf's, through a stack slot (forward: a heap block of the
# tangents; reverse: the arena offset of a copy of Qbar).
_PAIRS: WeakKeyDictionary = WeakKeyDictionary()


def _pair(call, record_type):
    """The call of a `record_type` record in call's function on the same matrix, or None."""
    roots = {id(r) for r in _roots(call.ops[call_a(call)])}
    for blk in call.block.function.blocks:
        for i in blk.instructions:
            r = BLAS.get(i.callee_name or "") if i.opcode == "call" else None
            if isinstance(r, record_type) and roots & {id(x) for x in _roots(i.ops[r.a])}:
                return i
    return None


def call_a(call) -> int:
    return BLAS[call.callee_name].a


def _pair_slot(owner, geqrf_call, make):
    slots = _PAIRS.setdefault(owner, {})
    if id(geqrf_call) not in slots:
        slots[id(geqrf_call)] = make()
    return slots[id(geqrf_call)]


def _same(x, y) -> bool:
    return x is y or isinstance(x, ConstInt) and isinstance(y, ConstInt) and x.value == y.value


@dataclass(frozen=True)
class Geqrf(Record):
    """`geqrf(m, n, A, lda, tau)`; the fields are argument indices."""
    name: str
    kind: int = 0
    m: int = 1
    n: int = 2
    a: int = 3
    lda: int = 4
    tau: int = 5

    def output(self, call):
        return call.ops[self.a]

    def outputs(self, call) -> tuple:
        return (call.ops[self.a], call.ops[self.tau])

    def inputs(self, call) -> tuple:
        return (self.a,)

    input_bytes = Gesdd.input_bytes

    def partner(self, call, unsupported):
        """The orgqr call that forms Q from this call's reflectors."""
        if gemm_record() is None or not any(isinstance(r, Gesv) for r in BLAS.values()):
            raise unsupported(f"`{call.callee_name}` needs a registered gemm and gesv for its "
                              "derivative", call)
        o = _pair(call, Orgqr)
        if o is None:
            raise unsupported(f"`{call.callee_name}` without the call that forms Q from its "
                              "reflectors (as np.linalg.qr makes): their derivative is not computed",
                              call)
        return o

    def factor(self, L, ops, m, n, k, lda, a, tau, q, r) -> None:
        """From the m x n matrix at a (leading dimension lda): R (k x n) into r, Q (m x k) into q
        (a copy of A, destroyed), tau scratch."""
        b, orgqr = L.b, BLAS[self.partner_name]
        L.helper("copy_rect", [m, n, a, lda, q, m])
        again = list(ops)
        again[self.m], again[self.n], again[self.lda] = (_arg(b, ops[i], v) for i, v in
                                                        ((self.m, m), (self.n, n), (self.lda, m)))
        again[self.a], again[self.tau] = q, tau
        b.call(self.name, L.call.type, again)
        L.helper("upper_rect", [k, n, q, m, r, k])
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
        self.refuse_constant_output(g.act.has_shadow, call, g.unsupported)
        if not g.act.has_shadow(call.ops[self.a]):
            return
        self.partner(call, g.unsupported)
        L = Lin.reverse(self, g, call, b)
        ops = [g.avail.primal(o, block, b) if not o.type.is_ptr else g.null_ptr for o in call.ops]
        m, n, lda = (L.i64(ops[i]) for i in (self.m, self.n, self.lda))
        k = L.smaller(m, n)
        extra = b.sub(n, k)
        slot = _pair_slot(g.alloca_block, call, lambda: g.alloca_builder.alloca(T.i64))
        mk, kn, kk = L.bytes(m, k), L.bytes(k, n), L.bytes(k, k)
        q, tau, r, rb, qb, mid, c, bm, bt, work, piv = L.scratch(
            L.bytes(m, n), L.bytes(k), kn, kn, mk, kk, kk, mk, mk, kk, b.mul(k, ConstInt(T.i64, 8)))
        a0 = self.input(g, call, self.a, block, b, always=True)
        self.factor(L, ops, m, n, k, lda, a0, tau, q, r)
        da = g.avail.shadow(call.ops[self.a], block, b)
        L.helper("upper_rect", [k, n, da, lda, rb, k])                       # Rbar
        qbar = b.gep(T.i8, g.tape.load(b, arena(g)[0]), [b.load(T.i64, slot)])  # orgqr's Qbar
        L.helper("copy_rect", [m, k, qbar, m, qb, m])
        y, r2b = L.at(a0, ConstInt(T.i64, 0), k, lda), L.at(rb, ConstInt(T.i64, 0), k, k)
        L.gemm(False, True, m, k, extra, 1.0, y, lda, r2b, k, 1.0, qb, m)   # Qbar + Y R2bar^T
        L.gemm(False, True, k, k, k, 1.0, r, k, rb, k, 0.0, mid, k)          # R1 R1bar^T
        L.gemm(True, False, k, k, m, -1.0, qb, m, q, m, 1.0, mid, k)         # - Qbar^T Q
        L.map("mirror_lower", k, mid, k, c, k)                               # copyltu
        L.copy(bm, qb, mk)
        L.gemm(False, False, m, k, k, 1.0, q, m, c, k, 1.0, bm, m)
        L.helper("transpose_rect", [m, k, bm, m, bt, k])
        L.solve(k, r, work, piv, bt, k, nrhs=m)                              # R1^{-1} B^T
        L.helper("transpose_rect", [k, m, bt, k, da, lda])                   # Abar[:, :k]
        L.gemm(False, False, m, extra, k, 1.0, q, m, r2b, k, 0.0, L.at(da, ConstInt(T.i64, 0), k, lda),
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
        a0, q, tau, r, rt, t, x, z, bt, work, piv = L.scratch(
            L.bytes(m, n), L.bytes(m, n), L.bytes(k), L.bytes(k, n), kk, kk, kk, kk, mk, kk,
            b.mul(k, ConstInt(T.i64, 8)))
        L.helper("copy_rect", [m, n, ops[self.a], lda, a0, m])      # before the call
        c = fm.emit_primal(call)
        self.factor(L, c.ops, m, n, k, m, a0, tau, q, r)
        L.map("transposed", k, r, k, rt, k)                         # R1^T
        dqs = heap.allocate(b, b.mul(mk, ConstInt(T.i64, fm.width)))     # orgqr frees it
        b.store(dqs, _pair_slot(fm.bmap[fm.primal.entry], call, lambda: fm.entry_slot(T.ptr, "qr.dq")))
        y = L.at(a0, ConstInt(T.i64, 0), k, m)
        for j in range(fm.width):
            da = fm.shadow(call.ops[self.a], call)[j]
            dq = b.gep(T.i8, dqs, [b.mul(mk, ConstInt(T.i64, j))])
            L.gemm(True, False, k, k, m, 1.0, q, m, da, lda, 0.0, t, k)       # Q^T A1'
            L.map("transposed", k, t, k, x, k)
            L.solve(k, rt, work, piv, x, k)                                  # X^T = R1^{-T} (Q^T A1')^T
            L.map("transposed", k, x, k, t, k)                               # X
            L.map("fold_upper_zero", k, t, k, z, k)                          # R1' R1^{-1}
            L.helper("transpose_rect", [m, k, da, lda, bt, k])
            L.solve(k, rt, work, piv, bt, k, nrhs=m)
            L.helper("transpose_rect", [k, m, bt, k, dq, m])                 # A1' R1^{-1}
            L.gemm(False, False, m, k, k, -1.0, q, m, z, k, 1.0, dq, m)      # Q'
            L.gemm(False, False, k, k, k, 1.0, z, k, r, k, 0.0, t, k)        # R1'
            r2 = L.at(r, ConstInt(T.i64, 0), k, k)
            dr2 = L.at(da, ConstInt(T.i64, 0), k, lda)                       # A2' in, R2' out
            L.gemm(True, False, k, extra, m, 1.0, q, m, dr2, lda, 0.0, r2, k)   # Q^T A2' (r: scratch now)
            L.gemm(True, False, k, extra, m, 1.0, dq, m, y, m, 1.0, r2, k)      # + Q'^T A2
            L.helper("upper_rect", [k, k, t, k, da, lda])                   # R' over A'
            L.scale(b.sub(m, k), k, L.at(da, k, ConstInt(T.i64, 0), lda), lda, 0.0)
            L.helper("copy_rect", [k, extra, r2, k, dr2, lda])
        L.release()


ORGQR_PARAMS = [T.i8, T.i64, T.i64, T.i64, T.ptr, T.i64, T.ptr]


@dataclass(frozen=True)
class Orgqr(Record):
    """`orgqr(m, n, k, A, lda, tau)` with n = k (Q's first k columns, as np.linalg.qr asks);
    the fields are argument indices."""
    name: str
    kind: int = 0
    m: int = 1
    n: int = 2
    k: int = 3
    a: int = 4
    lda: int = 5
    tau: int = 6

    def output(self, call):
        return call.ops[self.a]

    def inputs(self, call) -> tuple:
        return (self.a,)

    def input_bytes(self, b, ops, k):
        ft = KINDS.get(ops[self.kind].value, T.f64)
        m, n = _i64(b, ops[self.m]), _i64(b, ops[self.n])
        count = b.add(b.mul(_i64(b, ops[self.lda]), b.sub(n, ConstInt(T.i64, 1))), m)
        return b.mul(count, ConstInt(T.i64, T.size_of(ft)))

    def partner(self, call, unsupported):
        if not _same(call.ops[self.n], call.ops[self.k]):
            raise unsupported(f"`{call.callee_name}` asking for more columns than reflectors", call)
        p = _pair(call, Geqrf)
        if p is None:
            raise unsupported(f"`{call.callee_name}` on reflectors that no geqrf call in the kernel "
                              "made: their derivative is not computed", call)
        return p

    def reverse(self, g, call, block, b) -> None:
        if not g.act.has_shadow(call.ops[self.a]):
            return
        geqrf = self.partner(call, g.unsupported)
        m, n, lda = (_i64(b, g.avail.primal(call.ops[i], block, b)) for i in (self.m, self.n, self.lda))
        L = Lin.reverse(self, g, call, b)
        buf, cap, used = arena(g)
        fields = [g.tape.frame.address(b, f) for f in (buf, cap, used)]
        ensure(g.module, "enzpy.arena_push")
        off = b.call("enzpy.arena_push", T.i64, fields + [g.null_ptr, L.bytes(m, n)])
        b.store(off, _pair_slot(g.alloca_block, geqrf, lambda: g.alloca_builder.alloca(T.i64)))
        qbar = b.gep(T.i8, g.tape.load(b, buf), [off])
        da = g.avail.shadow(call.ops[self.a], block, b)
        L.helper("copy_rect", [m, n, da, lda, qbar, m])      # Qbar, for geqrf's adjoint
        L.scale(m, n, da, lda, 0.0)

    def tangent(self, fm, call) -> None:
        c = fm.emit_primal(call)
        if not fm.has_shadow(call.ops[self.a]):
            return
        geqrf = self.partner(call, fm.unsupported)
        L = Lin.forward(self, fm, call, c.ops[self.kind])
        b = L.b
        m, n, lda = (L.i64(c.ops[i]) for i in (self.m, self.n, self.lda))
        dqs = b.load(T.ptr, _pair_slot(fm.bmap[fm.primal.entry], geqrf,
                                       lambda: fm.entry_slot(T.ptr, "qr.dq")))
        for j in range(fm.width):
            dq = b.gep(T.i8, dqs, [b.mul(L.bytes(m, n), ConstInt(T.i64, j))])
            L.helper("copy_rect", [m, n, dq, m, fm.shadow(call.ops[self.a], call)[j], lda])
        heap.free(b, dqs)


def register_geqrf(name: str, **indices) -> Geqrf:
    r = Geqrf(name, **indices)
    BLAS[name] = r
    return r


def register_orgqr(name: str, **indices) -> Orgqr:
    r = Orgqr(name, **indices)
    BLAS[name] = r
    return r
