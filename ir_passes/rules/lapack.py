"""LAPACK records: calls that overwrite their inputs in place, differentiated as a unit, with
matrix-level adjoints that call BLAS and LAPACK themselves (the host's gemm record, the routine
itself, and the host's trsm, getrs and ger through runtime/fortran.py), so a gradient stays
O(n^3) at library speed; a factor is never factored again to solve with it. This module has what they share
(`Lin`, which emits their steps) and gesv; lapack_lu.py has potrf, getrf, getri;
lapack_spectral.py syevd and gesdd; lapack_qr.py the geqrf + orgqr pair; lapack_eig.py and
lapack_eig_real.py geev on complex and real data.

A LAPACK call mutates its arguments. Its rule follows the two rules of pullbacks for mutating
functions: the values an overwritten argument held before the call (or the results it left, with
`after=True`) are copied into the arena (rules/blas.py) for the reverse sweep, and the adjoint of a
mutated argument is applied only by mutating its shadow. Each record's reverse and tangent share
one shape: refuse what it cannot differentiate, take scratch matrices (`Lin.scratch`: the arena
in the reverse sweep, the heap in forward mode), recompute what the call destroyed from the
saved inputs, then a few gemm / triangular solve calls and elementwise helpers (runtime/matrix.py); forward
mode repeats the last part once per lane.

`gesv(n, nrhs, A, lda, ipiv, B, ldb)` solves A X = B: A is overwritten by its LU factors, B by X.
- reverse: with dX = shadow(B), Y = A^{-T} dX (getrs 'T' with the LU factors and pivots the call
  left, saved in the arena, in place in shadow(B), which then holds B's adjoint),
  shadow(A) = -Y X^T (a gemm);
- tangent: X' = A^{-1} (B' - A' X) (a gemm, then getrs 'N' with the factors the call just left).
The LU factors it leaves in A must not be read afterwards (a host's `np.linalg.solve` only frees
them): a kernel that reads them is refused, since their derivative is not computed. A singular A
makes gesv fail, and the primal raises before the reverse sweep runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import types as T
from ..ir.values import Constant, ConstFloat, ConstInt
from ..runtime import fortran, triangular  # noqa: F401  (register the helpers Lin.fortran calls)
from ..runtime import heap
from ..runtime.helpers import ensure
from .blas import (BLAS, GEMM_PARAMS, HOST_ROUTINES, Gemm, Record, conj_matrices,
                   element_bytes)
from .effects import allocator_or_inactive


def roots(p, seen=None) -> list:
    """The values pointer p derives from through geps, casts, phis and selects."""
    seen = set() if seen is None else seen
    if id(p) in seen:
        return []
    seen.add(id(p))
    op = getattr(p, "opcode", None)
    if op in ("getelementptr", "bitcast", "addrspacecast"):
        return roots(p.ops[0], seen)
    if op in ("phi", "select"):
        return [r for o in (p.ops if op == "phi" else p.ops[1:]) for r in roots(o, seen)]
    return [p]


def read_after(call, p) -> bool:
    """May the memory p points into be read by something that runs after `call` (a load, or a
    call that may read it, other than frees and reference counts)?"""
    ids = {id(r) for r in roots(p)}
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
            if any(id(r) in ids for q in ptrs for r in roots(q)):
                return True
        for s in blk.instructions[-1].successors():
            if id(s) not in seen:
                seen.add(id(s))
                work.append(s)
    return False


def gemm_record():
    return next((r for r in BLAS.values() if isinstance(r, Gemm)), None)


def call_gemm(b, module, like, kind, ta, tb, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc):
    """A call of the host's gemm (refused by the caller when it registered none); ta, tb: true
    for the transpose, or BLAS's letter ("c": the conjugate transpose)."""
    gemm = gemm_record()
    module.declare(gemm.name, like.type, GEMM_PARAMS)
    new = [None] * len(GEMM_PARAMS)
    flags = tuple(ConstInt(T.i8, ord(t.lower()) if isinstance(t, str) else ord("t") if t else ord("n"))
                  for t in (ta, tb))
    for i, v in zip((gemm.kind, gemm.transa, gemm.transb, gemm.m, gemm.n, gemm.k, gemm.alpha, gemm.a,
                     gemm.lda, gemm.b, gemm.ldb, gemm.beta, gemm.c, gemm.ldc),
                    (kind,) + flags + (m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)):
        new[i] = v
    b.call(gemm.name, like.type, new)


def needs_gemm(call, unsupported, *routines) -> None:
    """Refuses a call whose derivative needs a gemm (and host `routines`) the host did not
    register."""
    missing = [r for r in routines if r not in HOST_ROUTINES]
    if gemm_record() is None or missing:
        what = " and ".join(["gemm"] + list(routines))
        raise unsupported(f"`{call.callee_name}` needs a registered {what} for its derivative", call)


def i64(b, v):
    return v if v.type == T.i64 else b.cast("sext", v, T.i64)


def as_arg(b, like, v):
    """v (an i64) as an argument of like's type."""
    return v if like.type == v.type else b.cast("trunc", v, like.type)


def primal_ops(g, call, block, b) -> list:
    """The call's operands in the reverse sweep: primal values, null for pointers."""
    return [g.primal_at(o, block, b) if not o.type.is_ptr else Constant(T.ptr, "null") for o in call.ops]


def matrix_bytes(b, ops, kind, rows, cols, ld):
    """The bytes a column-major rows x cols matrix spans: ld * (cols - 1) + rows elements."""
    count = b.add(b.mul(i64(b, ops[ld]), b.sub(i64(b, ops[cols]), ConstInt(T.i64, 1))),
                  i64(b, ops[rows]))
    return b.mul(count, ConstInt(T.i64, element_bytes(ops, kind)))


@dataclass(frozen=True)
class Lapack(Record):
    """What a LAPACK record states about its wrapper besides the argument indices (its fields,
    after `name` and the type char `kind`), as class data read by the shared methods:
    RESULT the pointer `output` names, WRITES every pointer the call writes, SHADOWED those
    holding differentiable results, READS the inputs, SHAPES each matrix argument's
    (rows, columns, leading dimension) fields, INTS each 32-bit integer array's length field."""
    name: str
    kind: int = 0
    RESULT: ClassVar[str] = "a"
    WRITES: ClassVar[tuple] = ("a",)
    SHADOWED: ClassVar[tuple] = ()
    READS: ClassVar[tuple] = ("a",)
    SHAPES: ClassVar[dict] = {}
    INTS: ClassVar[dict] = {}

    def output(self, call):
        return call.ops[getattr(self, self.RESULT)]

    def outputs(self, call) -> tuple:
        return tuple(call.ops[getattr(self, f)] for f in self.WRITES)

    def shadowed(self, call) -> tuple:
        return tuple(call.ops[getattr(self, f)] for f in self.SHADOWED or (self.RESULT,))

    def inputs(self, call) -> tuple:
        return tuple(getattr(self, f) for f in self.READS)

    def input_bytes(self, b, ops, k):
        field = next(f for f in (*self.SHAPES, *self.INTS) if getattr(self, f) == k)
        if field in self.INTS:
            return b.mul(i64(b, ops[getattr(self, self.INTS[field])]), ConstInt(T.i64, 4))
        rows, cols, ld = (getattr(self, f) for f in self.SHAPES[field])
        return matrix_bytes(b, ops, self.kind, rows, cols, ld)

    @classmethod
    def registrar(cls):
        """`register(name, **indices)`: the record of wrapper `name`, in the BLAS table."""
        def register(name: str, **indices):
            r = cls(name, **indices)
            BLAS[name] = r
            return r
        register.__name__ = f"register_{cls.__name__.lower()}"
        return register


class Lin:
    """Emits the steps of one matrix-level adjoint or tangent on float type ft: the host's gemm
    and gesv, runtime/matrix.py's helpers, constants in stack slots, scratch memory (the arena in
    the reverse sweep, the heap in forward mode, freed by `release`). On complex data (`cx`) ft
    is each part's type, an element two of them, and `conj` conjugates matrices in place."""

    def __init__(self, b, module, call, kind, ft, slot, g=None, cx=False):
        self.b, self.module, self.call, self.kind, self.ft = b, module, call, kind, ft
        self.g, self._slot, self._consts, self._heap, self.cx = g, slot, {}, [], cx
        self.size = ConstInt(T.i64, T.size_of(ft) * (2 if cx else 1))
        self.zero = ConstInt(T.i64, 0)

    @classmethod
    def reverse(cls, record, g, call, b) -> "Lin":
        ft = record.float_type(g, call)
        cx = record.is_complex(call)
        t = T.ArrayType(2, ft) if cx else ft
        return cls(b, g.module, call, call.ops[record.kind], ft, lambda: g.stack_slot(t),
                   g, cx)

    @classmethod
    def forward(cls, record, fm, call, kind) -> "Lin":
        ft = record.element_type(call, fm.types)
        if ft is None:
            raise fm.unsupported(record.no_type(call), call)
        cx = record.is_complex(call)
        t = T.ArrayType(2, ft) if cx else ft
        return cls(fm.b, fm.module, call, kind, ft, lambda: fm.entry_slot(t, "lapack.c"), cx=cx)

    def const(self, value: float):
        """A stack slot holding `value` (gemm's alpha and beta; (value, 0) on complex data)."""
        if value not in self._consts:
            s = self._slot()
            self.b.store(ConstFloat(self.ft, value), s)
            if self.cx:
                self.b.store(ConstFloat(self.ft, 0.0), self.b.gep(self.ft, s, [ConstInt(T.i64, 1)]))
            self._consts[value] = s
        return self._consts[value]

    def conj(self, *mats) -> None:
        """Conjugate each complex (rows, cols, pointer, ld) in place."""
        conj_matrices(self.b, self.module, self.ft, mats)

    def i64(self, v):
        return i64(self.b, v)

    def smaller(self, x, y):
        return self.b.select(self.b.icmp("slt", x, y), x, y)

    def when(self, more, count):
        """`count` when `more`, else 0 (a step that vanishes for square matrices)."""
        return self.b.select(more, count, self.zero)

    def bytes(self, *dims):
        v = self.size
        for d in dims:
            v = self.b.mul(v, d)
        return v

    def pivots(self, n):
        return self.b.mul(n, ConstInt(T.i64, 8))

    def at(self, p, row, col, ld):
        """The address of element (row, col) of the column-major matrix at p."""
        return self.b.gep(T.i8, p, [self.bytes(self.b.add(self.b.mul(col, ld), row))])

    def scratch(self, *sizes) -> list:
        """Blocks of `sizes` bytes (i64 values) for this derivative. In the reverse sweep, a
        pointer into the arena from before a push may be stale: take scratch before `input`."""
        b = self.b
        if self.g is not None:
            offs = self.g.arena_push(b, sizes)
            base = self.g.arena_base(b)    # after the pushes: growing may move the arena
            return [b.gep(T.i8, base, [o]) for o in offs]
        total, offs = self.zero, []
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

    def trsm(self, side, uplo, trans, diag, m, n, a, lda, bm, ldb) -> None:
        """bm (m x n) = op(a)^{-1} bm (side "L") or bm op(a)^{-1} ("R"), a triangular: the host's
        trsm, or own loops when small (runtime/triangular.py); on complex data the host's ztrsm
        or ctrsm at every size; side, uplo, trans, diag are BLAS's letters."""
        if self.cx:
            self.complex_routine("trsm", (side, uplo, trans, diag), [m, n, self.const(1.0), a, lda,
                                                                     bm, ldb])
            return
        self.fortran("trsm_sized", (side, uplo, trans, diag), [m, n, ConstFloat(self.ft, 1.0), a,
                                                               lda, bm, ldb])

    def getrs(self, trans, n, nrhs, lu, lda, ipiv, bm, ldb) -> None:
        """bm (n x nrhs) = op(A)^{-1} bm from A's packed LU factors and getrf's pivots: own
        interchanges and trsm_sized's solves, never the host's getrs (runtime/triangular.py);
        on complex data the host's zgetrs or cgetrs."""
        if self.cx:
            self.complex_routine("getrs", (trans,), [n, nrhs, lu, lda, ipiv, bm, ldb])
            return
        self.fortran("getrs_sized", (trans,), [n, nrhs, lu, lda, ipiv, bm, ldb])

    def complex_routine(self, routine, letters, args) -> None:
        """A call of the host's complex `routine` (runtime/fortran.py's `enzpy.<routine>.c128`
        or `.c64`, no own loops for small sizes): BLAS letters, then values."""
        full = f"enzpy.{routine}.c{16 * T.size_of(self.ft)}"
        ensure(self.module, full)
        self.b.call(full, T.void, [ConstInt(T.i8, ord(c)) for c in letters] +
                    [self.i64(a) if a.type.is_int else a for a in args])

    def fortran(self, routine, letters, args) -> None:
        """A call of runtime/fortran.py's helper for `routine`: BLAS letters, then values."""
        full = f"enzpy.{routine}.{self.ft.suffix}"
        ensure(self.module, full)
        chars = [ConstInt(T.i8, ord(c)) for c in letters]
        self.b.call(full, T.void, chars + [self.i64(a) if a.type.is_int else a for a in args])

    def copy(self, dst, src, nbytes) -> None:
        self.b.call("llvm.memcpy.p0.p0.i64", T.void, [dst, src, nbytes, ConstInt(T.i1, 0)])

    def helper(self, name, args, ret=T.void):
        """A call of runtime/matrix.py's `enzpy.<name>.<suffix>`."""
        full = f"enzpy.{name}.{self.ft.suffix}"
        ensure(self.module, full)
        return self.b.call(full, ret, [self.i64(a) if a.type.is_int and a.type.bits > 1 else a
                                       for a in args])

    def map(self, name, n, src, lds, dst, ldd) -> None:
        """The elementwise map `name` of an n x n matrix (runtime/matrix.py's SQUARE_BODIES;
        their `c` variants on complex data)."""
        self.helper("c" + name if self.cx else name, [n, src, lds, dst, ldd])

    def rect(self, name, rows, cols, src, lds, dst, ldd) -> None:
        """runtime/matrix.py's rectangular map `name` ("copy_rect", "upper_rect") of a rows x
        cols matrix; on complex data a copy is one of twice the rows of parts, the others
        their `c` variants."""
        if self.cx and name == "copy_rect":
            two = ConstInt(T.i64, 2)
            rows, lds, ldd = (self.b.mul(self.i64(v), two) for v in (rows, lds, ldd))
        elif self.cx:
            name = "c" + name
        self.helper(name, [rows, cols, src, lds, dst, ldd])

    def divide_by(self, rows, cols, p, ld, s, along) -> None:
        """p_ij /= s_i (along rows, `along` 1) or s_j (`along` 0), s real; 0 where p_ij is 0."""
        self.helper("cdivide_by" if self.cx else "divide_by", [rows, cols, p, ld, s, ConstInt(T.i64, along)])

    def sum_abs(self, rows, cols, p, ld, out) -> None:
        """*out += the sum of |p_ij| (of each part on complex data)."""
        self.parts("sum_abs", 1, [rows, cols, p, ld, out])

    def parts(self, name, count, args) -> None:
        """runtime/matrix.py's `name`, whose arguments are (rows, cols) and `count` matrices'
        (pointer, ld), then others: on complex data each matrix taken as a real one of twice
        the rows (for maps that treat each part alike: sum_abs, col_dots with Re(a^H b),
        add_scaled_cols)."""
        if self.cx:
            two = ConstInt(T.i64, 2)
            args = list(args)
            for i in [0] + [3 + 2 * j for j in range(count)]:
                args[i] = self.b.mul(self.i64(args[i]), two)
        self.helper(name, args)

    def scale(self, rows, cols, p, ld, value, real=False) -> None:
        """p *= value (a float, or a value of type ft); 0 stores zeros. On complex data p is
        complex unless `real` (the Hermitian eigenvalues)."""
        v = ConstFloat(self.ft, value) if isinstance(value, float) else value
        if self.cx and not real:
            two = ConstInt(T.i64, 2)
            rows, ld = self.b.mul(self.i64(rows), two), self.b.mul(self.i64(ld), two)
        self.helper("scale_matrix", [rows, cols, p, ld, v])

    def swap_rows(self, n, ipiv, p, ld, back: bool) -> None:
        """LAPACK's row interchanges ipiv on the n x n p: P^T p, or P p when `back`."""
        self.helper("cswap_rows" if self.cx else "swap_rows",
                    [n, n, ipiv, p, ld, ConstInt(T.i64, int(back))])


@dataclass(frozen=True)
class Gesv(Lapack):
    """`gesv(n, nrhs, A, lda, ipiv, B, ldb)`; the fields are argument indices. Complex data:
    Y = A^{-H} dX = conj(A^{-T} conj(dX)) and dA = -Y X^H = conj(-conj(Y) X^T), the real steps
    between in-place conjugations; the tangent is the real one."""
    complex_data = True
    n: int = 1
    nrhs: int = 2
    a: int = 3
    lda: int = 4
    ipiv: int = 5
    b: int = 6
    ldb: int = 7
    RESULT: ClassVar[str] = "b"
    WRITES: ClassVar[tuple] = ("a", "ipiv", "b")
    READS: ClassVar[tuple] = ("a", "b")
    SHAPES: ClassVar[dict] = {"a": ("n", "n", "lda"), "b": ("n", "nrhs", "ldb")}
    INTS: ClassVar[dict] = {"ipiv": "n"}

    def check(self, has_shadow, call, unsupported) -> None:
        self.refuse_constant_output(has_shadow, call, unsupported)
        if not (has_shadow(call.ops[self.a]) or has_shadow(call.ops[self.b])):
            return
        needs_gemm(call, unsupported, "getrs")
        if read_after(call, call.ops[self.a]):
            raise unsupported(f"the LU factors `{call.callee_name}` leaves in its matrix are read "
                              "afterwards; their derivative is not computed", call)

    def reverse(self, g, call, block, b) -> None:
        self.check(g.has_shadow, call, g.unsupported)
        if not g.has_shadow(call.ops[self.b]):
            return
        L = Lin.reverse(self, g, call, b)
        ops = primal_ops(g, call, block, b)
        n, nrhs, lda, ldb = (L.i64(ops[i]) for i in (self.n, self.nrhs, self.lda, self.ldb))
        lu = self.input(g, call, self.a, block, b, after=True)
        piv = self.input(g, call, self.ipiv, block, b, after=True)
        x = self.input(g, call, self.b, block, b, after=True)
        db = g.shadow_at(call.ops[self.b], block, b)
        cx = (n, nrhs, db, ldb)
        if L.cx:
            L.conj(cx)
        L.getrs("T", n, nrhs, lu, lda, piv, db, ldb)          # shadow(B) = A^{-T} dX
        if g.has_shadow(call.ops[self.a]):
            da = g.shadow_at(call.ops[self.a], block, b)
            L.gemm(False, True, n, n, nrhs, -1.0, db, ldb, x, ldb, 0.0, da, lda)
            if L.cx:
                L.conj((n, n, da, lda))
        if L.cx:
            L.conj(cx)

    def tangent(self, fm, call) -> None:
        self.check(fm.has_shadow, call, fm.unsupported)
        c = fm.emit_primal(call)
        if not fm.has_shadow(call.ops[self.b]):
            return
        L = Lin.forward(self, fm, call, c.ops[self.kind])
        n, nrhs = L.i64(c.ops[self.n]), L.i64(c.ops[self.nrhs])
        lu, piv, x, ldb, lda = (c.ops[i] for i in (self.a, self.ipiv, self.b, self.ldb, self.lda))
        for j in range(fm.width):
            db = fm.shadow(call.ops[self.b], call)[j]
            if fm.has_shadow(call.ops[self.a]):      # B' - A' X
                da = fm.shadow(call.ops[self.a], call)[j]
                L.gemm(False, False, n, nrhs, n, -1.0, da, lda, x, ldb, 1.0, db, ldb)
            L.getrs("N", n, nrhs, lu, lda, piv, db, ldb)   # X' = A^{-1} (B' - A' X)


register_gesv = Gesv.registrar()
