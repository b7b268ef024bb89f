"""BLAS-style rules: calls whose arguments are whole vectors or matrices, differentiated as a unit
(Enzyme has dedicated rules for dot, gemv, gemm rather than differentiating the library's code).

Each record says where its arguments are and carries its emitters, so adding a routine is one
record here: the analyses ask `output(call)` for the memory it writes, reverse mode calls
`reverse`, the forward sweep `save_input` for an input a later write may change, forward mode
`tangent`. The reverse and tangent code call the same BLAS routine (the callee itself), so a
matrix product's gradient costs two matrix products.

Matrices are column-major, as BLAS sees them (a row-major array is its transpose); `op(A)` is A
or its transpose per the call's transpose flag:
- `*out = dot(n, x, y)`: dx += d y, dy += d x (d = shadow(out), then zeroed);
  tangent dot(x', y) + dot(x, y').
- `C = alpha op(A) op(B) + beta C` (gemm): dA += alpha dC op(B)^T (transposed back when A is),
  dB += alpha op(A)^T dC, then dC = beta dC; tangent alpha (op(A') op(B) + op(A) op(B')) + beta C'.
- `y = alpha op(A) x + beta y` (gemv): dA += alpha dy x^T (a rank-1 update, runtime/matrix.py, or
  in a loop one gemm when the reverse leaves it, transforms/reverse/shadows/deferred_rank1.py),
  dx += alpha op(A)^T dy, dy = beta dy; tangent alpha (op(A') x + op(A) x') + beta y'.
- `*out = nrm2(n, x, inc)`: dx += d x / |x| (nothing where |x| = 0); tangent <x, x'> / |x|
  (complex x: the same on each part, real <x, x'> = Re sum conj(x) x').
alpha and beta must be constants stored into their slots right before the call (as a host's
wrappers do); alpha and beta carry no derivative.

Complex data (type char 'z' or 'c': each element a (real, imaginary) pair) takes the same
records. The shadow of a complex value holds dL/dRe + i dL/dIm; for the complex-linear products
(gemm, gemv) the adjoint of P is then conj(P^T conj(adjoint)), so each product of the reverse
conjugates the output's shadow and the shadow it adds into in place, runs the real formula above
with the same library call, and conjugates both back (one product at a time: two inputs sharing
a shadow, `a @ a`, stay right). The complex dot's adjoint is its own loop (dotu: dx += d
conj(y); dotc, the record's `conj` argument true: dx += conj(d) y). Tangents are the real ones
(each product is real-bilinear). A conjugate transpose flag ('c') makes the product no longer
complex-analytic; with the adjoints alpha dC op(B)^H of op(A) and alpha op(A)^H dC of op(B),
each reverse product is then one gemm with BLAS's letters (Gemm.reverse_conjugated). Complex
alpha and beta must have a zero imaginary part. The
strong zero holds for a complex dot with a zero adjoint (its loop is skipped); the complex
products call the library unguarded (`guarded_product` is real-only), so a zero adjoint entry
meeting an inf or NaN of a primal matrix gives NaN there.

Inputs must hold their values as of the call when the reverse sweep runs. When alias analysis
says a later write may change one, the forward sweep copies it into the gradient's arena (one
buffer parked with the tape between calls: a repeat call allocates nothing) and the tape keeps
its offset; `explain` lists the copy, why, and the bytes it took in the arena in the last call.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from ..ir import types as T
from ..ir.edit import emit_at
from ..ir.instructions import Instruction
from ..ir.values import Constant, ConstFloat, ConstInt, Global
from ..runtime import matrix  # noqa: F401  (registers the helpers below)
from ..runtime.helpers import ensure

BLAS: dict = {}          # callee name -> its record
KINDS = {ord("d"): T.f64, ord("s"): T.f32, ord("z"): T.f64, ord("c"): T.f32}
COMPLEX_KINDS = {ord("z"), ord("c")}     # complex data: the float type is each part's
HOST_ROUTINES: set = set()   # runtime/fortran.py's routines whose symbols the host defines
N, TR = ord("n"), ord("t")


def register_host_routine(routine: str) -> None:
    """The host defines `enzpy.host.dROUTINE` and `enzpy.host.sROUTINE` (Fortran convention) for
    runtime/fortran.py's `routine` ("trsm", "getrs")."""
    HOST_ROUTINES.add(routine)


def lookup_blas(name: str):
    """The record of callee `name`, or None."""
    return BLAS.get(name)


def call_like(b, call, ops):
    """A call to `call`'s callee with operands `ops`."""
    return b.emit(Instruction("call", call.type, list(ops), callee=call.callee,
                              arg_attrs=["" for _ in ops], fnty_text=call.fnty_text))


def constant_before(slot, call):
    """The float constant stored into `slot` right before `call` in its block (nothing else
    touching the slot between), or None."""
    insts = call.block.instructions
    for i in reversed(insts[:insts.index(call)]):
        if i.opcode == "store" and i.ops[1] is slot:
            return i.ops[0].value if isinstance(i.ops[0], ConstFloat) else None
        if slot in i.ops:
            return None
    return None


def complex_constant_before(slot, call):
    """The complex constant (re, im) stored into `slot` right before `call` in its block: two
    float stores (the imaginary part through a getelementptr of the slot) or a zeroing memset;
    None when it is not one."""
    insts = call.block.instructions
    re_part = im_part = None
    parts = {slot}
    for blk in call.block.function.blocks:
        parts.update(i for i in blk.instructions if i.opcode == "getelementptr" and i.ops[0] is slot)
    for i in reversed(insts[:insts.index(call)]):
        if i.opcode == "store" and i.ops[1] in parts:
            if not isinstance(i.ops[0], ConstFloat):
                return None
            if i.ops[1] is slot:
                re_part = i.ops[0].value if re_part is None else re_part
            else:
                im_part = i.ops[0].value if im_part is None else im_part
        elif i.opcode == "call" and (i.callee_name or "").startswith("llvm.memset") and \
                i.ops[0] is slot and isinstance(i.ops[1], ConstInt) and i.ops[1].value == 0:
            re_part = 0.0 if re_part is None else re_part
            im_part = 0.0 if im_part is None else im_part
        elif any(o in parts for o in i.ops) and i.opcode != "getelementptr":
            return None
        if re_part is not None and im_part is not None:
            return re_part, im_part
    return None


def constant_global(module, p, ft, parts=1):
    """The float (type ft) at the start of the constant global p (a host's array of one scale
    factor: a host's pseudo-inverse may pass alpha and beta so), or None; `parts` 2: the
    complex one, as (re, im)."""
    v = _constant_global(module, p, ft, parts)
    return v if v is None or parts > 1 else v[0]


def _constant_global(module, p, ft, parts):
    if not isinstance(p, Global) or ft is None:
        return None
    head = f"@{p.name} = "
    line = next((i for i in module.items if isinstance(i, str) and i.startswith(head)), None)
    if line is None or " constant " not in line:
        return None
    if "zeroinitializer" in line:
        return (0.0,) * parts
    m = re.search(r'c"((?:[^"\\]|\\[0-9A-Fa-f]{2})*)"', line)
    if m is None:
        return None
    raw = re.sub(rb"\\([0-9A-Fa-f]{2})", lambda h: bytes([int(h.group(1), 16)]),
                 m.group(1).encode("latin-1"))
    size = T.size_of(ft) * parts
    fmt = "<" + ("d" if T.size_of(ft) == 8 else "f") * parts
    return struct.unpack(fmt, raw[:size]) if len(raw) >= size else None


@dataclass(frozen=True)
class SavedInput:
    """Tape key (transforms/reverse/tape/tape_keys.py has the other kinds): argument `arg` of
    BLAS/LAPACK `call` copied into the arena before the call (`after`: as the call left it);
    the entry keeps the copy's offset."""
    call: object
    arg: int
    after: bool = False
    label = "blas input"

    @property
    def what(self) -> str:
        return (f"{self.call.ops[self.arg].ref()}, argument {self.arg} of @{self.call.callee_name}"
                f"{' as the call left it' if self.after else ''}")

    def places(self) -> tuple:
        return (self.call,)

    def save(self, fwd, e) -> None:
        lookup_blas(self.call.callee_name).save_input(fwd, self, e)


class Record:
    """What every record shares: its element type, the inputs it reads, and their copies.
    `complex_data`: whether its rules take complex data (type char 'z', 'c'); a record without
    them refuses complex calls."""
    kind: int | None = None
    complex_data = False

    def outputs(self, call) -> tuple:
        """Every pointer the call writes (the alias analysis's writes)."""
        return (self.output(call),)

    def shadowed(self, call) -> tuple:
        """The pointers the call writes differentiable results into (each gets a shadow when a
        differentiable value reaches the call)."""
        return (self.output(call),)

    def inputs(self, call) -> tuple:
        """Argument indices of the memory the call reads."""
        raise NotImplementedError

    def input_bytes(self, b, ops, k):
        """The bytes of input k the call reads (an i64 value), with the call's operands `ops`."""
        raise NotImplementedError

    def is_complex(self, call) -> bool:
        """Complex data (the type char 'z' or 'c')."""
        return self.kind is not None and isinstance(call.ops[self.kind], ConstInt) and \
            call.ops[self.kind].value in COMPLEX_KINDS

    def element_type(self, call, types):
        """The float type of the data (`types`: the function's TypeInfo), or None."""
        if self.kind is not None and isinstance(call.ops[self.kind], ConstInt):
            if self.is_complex(call) and not self.complex_data:
                return None
            return KINDS.get(call.ops[self.kind].value)
        return types.float_type_behind(call.ops[self.inputs(call)[0]])

    def float_type(self, g, call):
        ft = self.element_type(call, g.types)
        if ft is None:
            raise g.unsupported(self.no_type(call), call)
        return ft

    def no_type(self, call) -> str:
        """Why element_type found none."""
        if self.is_complex(call):
            return f"`{call.callee_name}` on complex data (no complex rule for it yet)"
        return f"`{call.callee_name}` on data of unknown float type"

    def scalar(self, g, call, k) -> float:
        """The constant behind pointer argument k (alpha, beta); for complex data, its real
        part (the imaginary part must be 0)."""
        if self.is_complex(call):
            v = self.complex_constant(g.module, call, k)
            if v is None or v[1] != 0.0 or g.has_shadow(call.ops[k]):
                raise g.unsupported(f"`{call.callee_name}` on complex data with a scale factor "
                                    f"that is not a real constant", call)
            return v[0]
        v = constant_before(call.ops[k], call)
        if v is None:
            v = constant_global(g.module, call.ops[k], self.element_type(call, g.types))
        if v is None or g.has_shadow(call.ops[k]):
            raise g.unsupported(f"`{call.callee_name}` with a scale factor that is not a constant", call)
        return v

    def complex_constant(self, module, call, k):
        """(re, im) of the complex constant behind pointer argument k: stored right before the
        call, or a constant global; or None."""
        v = complex_constant_before(call.ops[k], call)
        if v is None:
            v = constant_global(module, call.ops[k], KINDS[call.ops[self.kind].value], parts=2)
        return v

    # --- reverse mode
    def changes_later(self, g, call, k) -> bool:
        """May a write after the call change input k before the reverse sweep reads it?"""
        return g.written_after(call, call.ops[k])

    def input(self, g, call, k, block, b, always=False, after=False):
        """Input k as the call read it: the primal pointer, or its copy in the arena (`always`:
        the call itself overwrites it; `after`: argument k as the call left it, always copied)."""
        always = always or after
        if not always and not self.changes_later(g, call, k):
            return g.primal_at(call.ops[k], block, b)
        base = g.arena_base(b)
        off = g.saved(SavedInput(call, k, after), T.i64, call, block, b,
                      "an input of a BLAS call that a later write may change" if not always else
                      "an argument a LAPACK call overwrites")
        return b.gep(T.i8, base, [off])

    def save_input(self, fwd, key, e) -> None:
        """Forward sweep: copy argument `key.arg` into the arena before the call (after it when
        `key.after`); the tape entry `e` keeps its offset."""
        g = fwd.g
        call, k, after = key.call, key.arg, key.after
        fcall = fwd.vmap[call]

        def copy(b):
            size = self.input_bytes(b, fcall.ops, k)
            size = b.select(b.icmp("sgt", size, ConstInt(T.i64, 0)), size, ConstInt(T.i64, 0))
            g.copy_to_arena(b, e, fcall.ops[k], size)
        blk = fcall.block
        emit_at(g.module, blk, blk.instructions.index(fcall) + after, copy, "blascopy")

    def refuse_complex_beta(self, fm, call) -> None:
        """Forward mode scales a tangent by beta's real part alone: a complex beta must be a
        real constant."""
        if self.is_complex(call):
            v = self.complex_constant(fm.module, call, self.beta)
            if v is None or v[1] != 0.0:
                raise fm.unsupported(f"`{call.callee_name}` on complex data with a scale factor "
                                     f"that is not a real constant", call)

    def shadow_or_null(self, g, call, k, block, b):
        return g.shadow_at(call.ops[k], block, b) if g.has_shadow(call.ops[k]) \
            else Constant(T.ptr, "null")

    def refuse_constant_output(self, act_has_shadow, call, unsupported):
        """Differentiable inputs written into memory without a shadow: refused."""
        if not act_has_shadow(self.output(call)) and \
                any(act_has_shadow(call.ops[k]) for k in self.inputs(call)):
            raise unsupported("differentiable data is stored into memory that has no shadow", call,
                              "Pass the output as Duplicated(array, shadow).")


def element_bytes(ops, kind) -> int:
    """The bytes of one element of the call's data (a complex one is two floats)."""
    code = ops[kind].value if kind is not None else ord("d")
    return T.size_of(KINDS.get(code, T.f64)) * (2 if code in COMPLEX_KINDS else 1)


def _slot(b, stack_slot, ft, value, complex_=False):
    """A stack slot (made by `stack_slot(type)`) holding the constant `value` (for alpha / beta
    arguments; a complex one holds (value, 0))."""
    s = stack_slot(T.ArrayType(2, ft) if complex_ else ft)
    b.store(ConstFloat(ft, value), s)
    if complex_:
        b.store(ConstFloat(ft, 0.0), b.gep(ft, s, [ConstInt(T.i64, 1)]))
    return s


def parts(b, count, complex_):
    """`count` (as i64) real values: twice it for complex elements."""
    v = b.cast("sext", count, T.i64) if count.type != T.i64 else count
    return b.mul(v, ConstInt(T.i64, 2)) if complex_ else v


def conj_matrices(b, module, ft, mats) -> None:
    """Conjugate in place each complex column-major (rows, cols, pointer, ld) of `mats`."""
    helper = f"enzpy.conj_matrix.{ft.suffix}"
    ensure(module, helper)
    for rows, cols, p, ld in mats:
        b.call(helper, T.void, [b.cast("sext", x, T.i64) if x.type != T.i64 else x
                                for x in (rows, cols)] + [p, b.cast("sext", ld, T.i64)
                                                           if ld.type != T.i64 else ld])


def load_pair(b, ft, p):
    """(re, im) of the complex value at p."""
    return b.load(ft, p), b.load(ft, b.gep(ft, p, [ConstInt(T.i64, 1)]))


def store_pair(b, ft, pair, p) -> None:
    b.store(pair[0], p)
    b.store(pair[1], b.gep(ft, p, [ConstInt(T.i64, 1)]))


@dataclass(frozen=True)
class Dot(Record):
    """`*out = dot(n, x, y)`; the fields are argument indices."""
    complex_data = True
    name: str
    n: int          # argument index of the length
    x: int
    y: int
    out: int        # pointer receiving the result
    kind: int | None = None   # argument index of a BLAS type char ('d', 's', 'z', 'c'), if any
    conj: int | None = None   # argument index of a flag: nonzero conjugates x (complex dotc)

    def output(self, call):
        """The pointer the call writes."""
        return call.ops[self.out]

    def inputs(self, call) -> tuple:
        return (self.x, self.y)

    def input_bytes(self, b, ops, k):
        return b.mul(b.cast("sext", ops[self.n], T.i64), ConstInt(T.i64, element_bytes(ops, self.kind)))

    def reverse(self, g, call, block, b) -> None:
        out = call.ops[self.out]
        if not g.has_shadow(out):
            return
        ft = self.float_type(g, call)
        cx = self.is_complex(call)
        sout = g.shadow_at(out, block, b)
        d = load_pair(b, ft, sout) if cx else (b.load(ft, sout),)
        store_pair(b, ft, (ConstFloat(ft, 0.0),) * 2, sout) if cx else \
            b.store(ConstFloat(ft, 0.0), sout)
        n = b.cast("sext", g.primal_at(call.ops[self.n], block, b), T.i64)
        xs = [self.input(g, call, k, block, b) for k in (self.x, self.y)]
        shadows = [self.shadow_or_null(g, call, k, block, b) for k in (self.x, self.y)]
        helper = f"enzpy.{'c' if cx else ''}dot_adjoint.{ft.suffix}"
        ensure(g.module, helper)
        b.call(helper, T.void, [n, xs[0], xs[1], shadows[0], shadows[1], *d]
               + ([self.conjugates(g, call, block, b)] if cx else []))

    def conjugates(self, g, call, block, b):
        """An i1: does the complex call conjugate x (dotc)?"""
        if self.conj is None:
            return ConstInt(T.i1, 0)
        flag = g.primal_at(call.ops[self.conj], block, b)
        return b.icmp("ne", flag, ConstInt(flag.type, 0))

    # --- forward mode
    def tangent(self, fm, call) -> None:
        c = fm.emit_primal(call)
        out, vecs = call.ops[self.out], [k for k in (self.x, self.y) if fm.has_shadow(call.ops[k])]
        if not vecs:
            return
        if not fm.has_shadow(out):
            raise fm.unsupported("differentiable data is stored into memory that has no shadow", call,
                                 "Pass the output as Duplicated(array, shadow).")
        ft = self.element_type(call, fm.types)
        if ft is None:
            raise fm.unsupported(self.no_type(call), call)
        b, sout = fm.b, fm.shadow(out, call)
        cx = self.is_complex(call)
        for j in range(fm.width):
            total = None
            for k in vecs:
                slot = fm.entry_slot(T.ArrayType(2, ft) if cx else ft, "dot.t")
                ops = list(c.ops)
                ops[k] = fm.shadow(call.ops[k], call)[j]
                ops[self.out] = slot
                call_like(b, c, ops)
                t = load_pair(b, ft, slot) if cx else (b.load(ft, slot),)
                total = t if total is None else tuple(b.fadd(p, q) for p, q in zip(total, t))
            if cx:
                store_pair(b, ft, total, sout[j])
            else:
                b.store(total[0], sout[j])


def register_dot(name: str, n: int, x: int, y: int, out: int, kind: int | None = None,
                 conj: int | None = None) -> Dot:
    d = Dot(name, n, x, y, out, kind, conj)
    BLAS[name] = d
    return d


def _trans(g_or_fm, call, k, complex_=False) -> bool:
    """Is transpose flag k 't' or 'c'? Refuses a flag that is not a constant, and 'c' on
    complex data unless `complex_` is "c" (gemm takes it)."""
    v = call.ops[k]
    allowed = "nNtTcC" if complex_ in (False, "c") else "nNtT"
    if not isinstance(v, ConstInt) or chr(v.value) not in allowed:
        raise g_or_fm.unsupported(f"`{call.callee_name}` with a transpose flag that is not a constant"
                                  + (" 'n' or 't'" if allowed == "nNtT" else ""), call)
    return chr(v.value) not in "nN"


def _letter(call, k) -> str:
    return chr(call.ops[k].value).lower()


def _flag(t):
    """BLAS's flag: transposed or not, or a letter."""
    return ConstInt(T.i8, ord(t) if isinstance(t, str) else TR if t else N)


@dataclass(frozen=True)
class Gemm(Record):
    """`C = alpha op(A) op(B) + beta C`, column-major, op(A) m x k, op(B) k x n, C m x n; the
    fields are argument indices (BLAS's order after a type char)."""
    complex_data = True
    name: str
    kind: int = 0
    transa: int = 1
    transb: int = 2
    m: int = 3
    n: int = 4
    k: int = 5
    alpha: int = 6
    a: int = 7
    lda: int = 8
    b: int = 9
    ldb: int = 10
    beta: int = 11
    c: int = 12
    ldc: int = 13

    def output(self, call):
        return call.ops[self.c]

    def inputs(self, call) -> tuple:
        return (self.a, self.b)

    def input_bytes(self, b, ops, k):
        """ld * (columns - 1) + rows elements of A or B as stored."""
        m, n, kk = (b.cast("sext", ops[i], T.i64) for i in (self.m, self.n, self.k))
        if k == self.a:
            t, ld, dims = ops[self.transa], ops[self.lda], (m, kk)
        else:
            t, ld, dims = ops[self.transb], ops[self.ldb], (kk, n)
        rows, cols = dims if chr(t.value) in "nN" else dims[::-1]
        count = b.add(b.mul(b.cast("sext", ld, T.i64), b.sub(cols, ConstInt(T.i64, 1))), rows)
        return b.mul(count, ConstInt(T.i64, element_bytes(ops, self.kind)))

    def gemm(self, b, call, ops, ta, tb, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc):
        new = list(ops)
        for i, v in zip((self.transa, self.transb, self.m, self.n, self.k, self.alpha, self.a,
                         self.lda, self.b, self.ldb, self.beta, self.c, self.ldc),
                        (_flag(ta), _flag(tb), m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)):
            new[i] = v
        call_like(b, call, new)

    def reverse(self, g, call, block, b) -> None:
        self.refuse_constant_output(g.has_shadow, call, g.unsupported)
        if not g.has_shadow(call.ops[self.c]):
            return
        ft = self.float_type(g, call)
        cx = self.is_complex(call)
        ta, tb = _trans(g, call, self.transa, cx and "c"), _trans(g, call, self.transb, cx and "c")
        alpha, beta = self.scalar(g, call, self.alpha), self.scalar(g, call, self.beta)
        P = [g.primal_at(o, block, b) if not o.type.is_ptr else o for o in call.ops]
        m, n, k, lda, ldb, ldc = (P[i] for i in (self.m, self.n, self.k, self.lda, self.ldb, self.ldc))
        dc = g.shadow_at(call.ops[self.c], block, b)
        sa, sb = _slot(b, g.stack_slot, ft, alpha, cx), _slot(b, g.stack_slot, ft, 1.0, cx)
        if cx and "c" in (_letter(call, self.transa), _letter(call, self.transb)):
            self.reverse_conjugated(g, call, block, b, P, dc, sa, sb)
            self.scale_adjoint(g.module, b, ft, cx, m, n, dc, ldc, beta)
            return
        def product(adjoint, ta, tb, m, n, k, a, lda, bm, ldb, c, ldc):
            if not cx:
                guarded_product(b, ft, alpha, adjoint, ta, tb, m, n, k, a, lda, bm, ldb, c, ldc,
                                lambda *dims: self.gemm(b, call, P, ta, tb, *dims[:3], sa, a, lda,
                                                        bm, ldb, sb, c, ldc))
                return
            # c (m x n) += alpha op(a) op(bm), complex: conj(c) += alpha op(conj a) op(conj bm)
            adj = (m, k, a, lda) if adjoint == "a" else (k, n, bm, ldb)
            adj = adj if not (ta if adjoint == "a" else tb) else (adj[1], adj[0]) + adj[2:]
            conj_matrices(b, g.module, ft, [adj, (m, n, c, ldc)])
            self.gemm(b, call, P, ta, tb, m, n, k, sa, a, lda, bm, ldb, sb, c, ldc)
            conj_matrices(b, g.module, ft, [adj, (m, n, c, ldc)])
        if g.has_shadow(call.ops[self.a]):
            da, bv = g.shadow_at(call.ops[self.a], block, b), self.input(g, call, self.b, block, b)
            if not ta:   # dA (m x k) += alpha dC op(B)^T
                product("a", False, not tb, m, k, n, dc, ldc, bv, ldb, da, lda)
            else:        # dA (k x m) += alpha op(B) dC^T
                product("b", tb, True, k, m, n, bv, ldb, dc, ldc, da, lda)
        if g.has_shadow(call.ops[self.b]):
            db, av = g.shadow_at(call.ops[self.b], block, b), self.input(g, call, self.a, block, b)
            if not tb:   # dB (k x n) += alpha op(A)^T dC
                product("b", not ta, False, k, n, m, av, lda, dc, ldc, db, ldb)
            else:        # dB (n x k) += alpha dC^T op(A)
                product("a", True, ta, n, k, m, dc, ldc, av, lda, db, ldb)
        self.scale_adjoint(g.module, b, ft, cx, m, n, dc, ldc, beta)

    @staticmethod
    def scale_adjoint(module, b, ft, cx, m, n, dc, ldc, beta) -> None:
        """dC = beta dC."""
        helper = f"enzpy.scale_matrix.{ft.suffix}"
        ensure(module, helper)
        # a complex matrix as a real one: 2m rows, leading dimension 2 ldc
        b.call(helper, T.void, [parts(b, m, cx), b.cast("sext", n, T.i64), dc, parts(b, ldc, cx),
                                ConstFloat(ft, beta)])

    def reverse_conjugated(self, g, call, block, b, P, dc, sa, sb) -> None:
        """The reverse of a complex gemm with a conjugate transpose ('c') among its flags:
        with the adjoints of op(A), op(B) alpha dC op(B)^H and alpha op(A)^H dC, every case is one
        gemm with BLAS's letters, no conjugation (a 'c' flag turns a conjugate into a letter):
        dA = alpha dC op(B)^H ('n'), alpha conj(op(B)) dC^T ('t'), alpha op(B) dC^H ('c');
        dB = alpha op(A)^H dC ('n'), alpha dC^T conj(op(A)) ('t'), alpha dC^H op(A) ('c')."""
        la, lb = _letter(call, self.transa), _letter(call, self.transb)
        m, n, k, lda, ldb, ldc = (P[i] for i in (self.m, self.n, self.k, self.lda, self.ldb, self.ldc))
        flip = {"n": "c", "c": "n"}
        if g.has_shadow(call.ops[self.a]):
            da, bv = g.shadow_at(call.ops[self.a], block, b), self.input(g, call, self.b, block, b)
            if la == "n":      # lb is 'c'
                self.gemm(b, call, P, "n", flip[lb], m, k, n, sa, dc, ldc, bv, ldb, sb, da, lda)
            elif la == "t":    # lb is 'c': conj(B^H) = B^T
                self.gemm(b, call, P, "t", "t", k, m, n, sa, bv, ldb, dc, ldc, sb, da, lda)
            else:
                self.gemm(b, call, P, lb, "c", k, m, n, sa, bv, ldb, dc, ldc, sb, da, lda)
        if g.has_shadow(call.ops[self.b]):
            db, av = g.shadow_at(call.ops[self.b], block, b), self.input(g, call, self.a, block, b)
            if lb == "n":      # la is 'c'
                self.gemm(b, call, P, flip[la], "n", k, n, m, sa, av, lda, dc, ldc, sb, db, ldb)
            elif lb == "t":    # la is 'c': conj(A^H) = A^T
                self.gemm(b, call, P, "t", "t", n, k, m, sa, dc, ldc, av, lda, sb, db, ldb)
            else:
                self.gemm(b, call, P, "c", la, n, k, m, sa, dc, ldc, av, lda, sb, db, ldb)

    def tangent(self, fm, call) -> None:
        c = fm.emit_primal(call)
        self.refuse_constant_output(fm.has_shadow, call, fm.unsupported)
        if not fm.has_shadow(call.ops[self.c]):
            return
        ft = self.element_type(call, fm.types)
        if ft is None:
            raise fm.unsupported(self.no_type(call), call)
        _trans(fm, call, self.transa, self.is_complex(call) and "c")     # constants, or refused
        _trans(fm, call, self.transb, self.is_complex(call) and "c")
        b, ops = fm.b, c.ops
        cx = self.is_complex(call)
        one = fm.entry_slot(T.ArrayType(2, ft) if cx else ft, "gemm.one")
        b.store(ConstFloat(ft, 1.0), one)
        if cx:
            b.store(ConstFloat(ft, 0.0), b.gep(ft, one, [ConstInt(T.i64, 1)]))
        self.refuse_complex_beta(fm, call)
        shadowed = [k for k in (self.a, self.b) if fm.has_shadow(call.ops[k])]
        for j in range(fm.width):
            dc = fm.shadow(call.ops[self.c], call)[j]
            beta = ops[self.beta]
            for k in shadowed:
                new = list(ops)
                new[k], new[self.c], new[self.beta] = fm.shadow(call.ops[k], call)[j], dc, beta
                call_like(b, c, new)
                beta = one
            if not shadowed:
                ensure(fm.module, f"enzpy.scale_matrix.{ft.suffix}")
                b.call(f"enzpy.scale_matrix.{ft.suffix}", T.void,
                       [parts(b, ops[self.m], cx),
                        b.cast("sext", ops[self.n], T.i64), dc,
                        parts(b, ops[self.ldc], cx), b.load(ft, ops[self.beta])])


@dataclass(frozen=True)
class Gemv(Record):
    """`y = alpha op(A) x + beta y`, column-major A m x n, unit strides; the fields are argument
    indices."""
    complex_data = True
    name: str
    kind: int = 0
    trans: int = 1
    m: int = 2
    n: int = 3
    alpha: int = 4
    a: int = 5
    lda: int = 6
    x: int = 7
    beta: int = 8
    y: int = 9

    def output(self, call):
        return call.ops[self.y]

    def inputs(self, call) -> tuple:
        return (self.a, self.x)

    def input_bytes(self, b, ops, k):
        m, n = (b.cast("sext", ops[i], T.i64) for i in (self.m, self.n))
        if k == self.a:
            count = b.add(b.mul(b.cast("sext", ops[self.lda], T.i64), b.sub(n, ConstInt(T.i64, 1))), m)
        else:
            count = m if chr(ops[self.trans].value) not in "nN" else n
        return b.mul(count, ConstInt(T.i64, element_bytes(ops, self.kind)))

    def reverse(self, g, call, block, b) -> None:
        self.refuse_constant_output(g.has_shadow, call, g.unsupported)
        if not g.has_shadow(call.ops[self.y]):
            return
        ft = self.float_type(g, call)
        cx = self.is_complex(call)
        t = _trans(g, call, self.trans, cx)
        alpha, beta = self.scalar(g, call, self.alpha), self.scalar(g, call, self.beta)
        P = [g.primal_at(o, block, b) if not o.type.is_ptr else o for o in call.ops]
        m, n = P[self.m], P[self.n]
        one64 = ConstInt(T.i64, 1)
        dy = g.shadow_at(call.ops[self.y], block, b)
        ylen, xlen = (n, m) if t else (m, n)
        sa, sb = _slot(b, g.stack_slot, ft, alpha, cx), _slot(b, g.stack_slot, ft, 1.0, cx)
        if g.has_shadow(call.ops[self.a]):
            xv = self.input(g, call, self.x, block, b)
            u, v = (xv, dy) if t else (dy, xv)   # dA += alpha dy x^T ('n') or alpha x dy^T ('t')
            if cx:      # conj(dA) += alpha conj(dy) x^T ('n'; 't' likewise), complex
                da = g.shadow_at(call.ops[self.a], block, b)
                mats = [(m, n, da, P[self.lda]), (ylen, one64, dy, ylen)]
                conj_matrices(b, g.module, ft, mats)
                ensure(g.module, f"enzpy.crank1.{ft.suffix}")
                b.call(f"enzpy.crank1.{ft.suffix}", T.void,
                       [b.cast("sext", x, T.i64) for x in (m, n)] +
                       [ConstFloat(ft, alpha), u, v, da, b.cast("sext", P[self.lda], T.i64)])
                conj_matrices(b, g.module, ft, mats)
            else:
                g.rank1(b, call, block, ft, alpha, u, v, "b" if t else "a", call.ops[self.a],
                        tuple(call.ops[i] for i in (self.m, self.n, self.lda)))
        if g.has_shadow(call.ops[self.x]):
            dx, av = g.shadow_at(call.ops[self.x], block, b), self.input(g, call, self.a, block, b)
            def library(rows, cols, _k):
                new = list(P)
                new[self.trans], new[self.alpha], new[self.a], new[self.x] = _flag(not t), sa, av, dy
                new[self.beta], new[self.y], new[self.m], new[self.n] = sb, dx, rows, cols
                call_like(b, call, new)
            # dx += alpha op(A)^T dy, as a product of op(A)^T and dy (one column)
            rows, inner = (m, n) if t else (n, m)
            if cx:      # conj(dx) += alpha op(A)^T conj(dy)
                mats = [(xlen, one64, dx, xlen), (ylen, one64, dy, ylen)]
                conj_matrices(b, g.module, ft, mats)
                library(m, n, None)
                conj_matrices(b, g.module, ft, mats)
            else:
                guarded_product(b, ft, alpha, "b", not t, False, rows, ConstInt(T.i64, 1), inner,
                                av, P[self.lda], dy, inner, dx, rows,
                                lambda zero_m, _n, _k: library(zero_m if t else m,
                                                               n if t else zero_m, None))
        helper = f"enzpy.scale_matrix.{ft.suffix}"
        ensure(g.module, helper)
        rows = parts(b, ylen, cx)
        b.call(helper, T.void, [rows, one64, dy, one64, ConstFloat(ft, beta)])

    def tangent(self, fm, call) -> None:
        c = fm.emit_primal(call)
        self.refuse_constant_output(fm.has_shadow, call, fm.unsupported)
        if not fm.has_shadow(call.ops[self.y]):
            return
        ft = self.element_type(call, fm.types)
        if ft is None:
            raise fm.unsupported(self.no_type(call), call)
        t = _trans(fm, call, self.trans, self.is_complex(call))
        b, ops = fm.b, c.ops
        cx = self.is_complex(call)
        one = fm.entry_slot(T.ArrayType(2, ft) if cx else ft, "gemv.one")
        b.store(ConstFloat(ft, 1.0), one)
        if cx:
            b.store(ConstFloat(ft, 0.0), b.gep(ft, one, [ConstInt(T.i64, 1)]))
        self.refuse_complex_beta(fm, call)
        shadowed = [k for k in (self.a, self.x) if fm.has_shadow(call.ops[k])]
        for j in range(fm.width):
            dy = fm.shadow(call.ops[self.y], call)[j]
            beta = ops[self.beta]
            for k in shadowed:
                new = list(ops)
                new[k], new[self.y], new[self.beta] = fm.shadow(call.ops[k], call)[j], dy, beta
                call_like(b, c, new)
                beta = one
            if not shadowed:
                rows = ops[self.n] if t else ops[self.m]
                rows = parts(b, rows, cx)
                one64 = ConstInt(T.i64, 1)
                ensure(fm.module, f"enzpy.scale_matrix.{ft.suffix}")
                b.call(f"enzpy.scale_matrix.{ft.suffix}", T.void,
                       [rows, one64, dy, one64, b.load(ft, ops[self.beta])])


def guarded_product(b, ft, alpha, adjoint, ta, tb, m, n, k, a, lda, bm, ldb, c, ldc, library):
    """C (m x n) += alpha op(A) op(B) where operand `adjoint` ("a" or "b") is an adjoint and the
    other a primal matrix: by the library (`library(m, n, k)` emits its call), unless a zero of
    the adjoint meets an inf or NaN of the primal in a product (runtime/matrix.py
    `zero_meets_nonfinite`: one pass over the adjoint, and over the primal slices that meet its
    zeros); then by the guarded product there, in which such a term contributes 0 (the strong
    zero, rules/partials.py). Both calls are emitted; the one not taken gets m = 0 and does
    nothing."""
    i64 = lambda v: b.cast("sext", v, T.i64) if v.type != T.i64 else v  # noqa: E731
    test = f"enzpy.zero_meets_nonfinite_{adjoint}.{ft.suffix}"
    ensure(b.module, test)
    flags = [ConstInt(T.i1, int(ta)), ConstInt(T.i1, int(tb))]
    bad = b.call(test, T.i1, flags + [i64(m), i64(n), i64(k), a, i64(lda), bm, i64(ldb)])
    library(b.select(bad, ConstInt(m.type, 0), m), n, k)
    helper = f"enzpy.gemm_guarded_{adjoint}.{ft.suffix}"
    ensure(b.module, helper)
    b.call(helper, T.void, flags + [b.select(bad, i64(m), ConstInt(T.i64, 0)), i64(n), i64(k),
                                    ConstFloat(ft, alpha), a, i64(lda), bm, i64(ldb), c, i64(ldc)])


GEMM_PARAMS = [T.i8, T.i8, T.i8, T.i64, T.i64, T.i64, T.ptr, T.ptr, T.i64, T.ptr, T.i64, T.ptr,
               T.ptr, T.i64]


@dataclass(frozen=True)
class Nrm2(Record):
    """`*out = nrm2(n, x, inc)`; the fields are argument indices. Complex x: the norm of its
    parts, so each part's adjoint and tangent is the real one (the helpers' `c` variants)."""
    complex_data = True
    name: str
    kind: int = 0
    n: int = 1
    x: int = 2
    inc: int = 3
    out: int = 4

    def output(self, call):
        return call.ops[self.out]

    def inputs(self, call) -> tuple:
        return (self.x,)

    def input_bytes(self, b, ops, k):
        n, inc = b.cast("sext", ops[self.n], T.i64), b.cast("sext", ops[self.inc], T.i64)
        count = b.add(b.mul(inc, b.sub(n, ConstInt(T.i64, 1))), ConstInt(T.i64, 1))
        return b.mul(count, ConstInt(T.i64, element_bytes(ops, self.kind)))

    def reverse(self, g, call, block, b) -> None:
        out = call.ops[self.out]
        self.refuse_constant_output(g.has_shadow, call, g.unsupported)
        if not g.has_shadow(out):
            return
        ft = self.float_type(g, call)
        sout = g.shadow_at(out, block, b)
        d = b.load(ft, sout)
        b.store(ConstFloat(ft, 0.0), sout)
        if not g.has_shadow(call.ops[self.x]):
            return
        n, inc = (b.cast("sext", g.primal_at(call.ops[i], block, b), T.i64) for i in (self.n, self.inc))
        xv = self.input(g, call, self.x, block, b)
        dx = g.shadow_at(call.ops[self.x], block, b)
        helper = f"enzpy.{'c' if self.is_complex(call) else ''}nrm2_adjoint.{ft.suffix}"
        ensure(g.module, helper)
        b.call(helper, ft, [n, xv, inc, dx, d])

    def tangent(self, fm, call) -> None:
        c = fm.emit_primal(call)
        self.refuse_constant_output(fm.has_shadow, call, fm.unsupported)
        if not fm.has_shadow(call.ops[self.x]):
            return
        ft = self.element_type(call, fm.types)
        if ft is None:
            raise fm.unsupported(self.no_type(call), call)
        b = fm.b
        n, inc = (b.cast("sext", c.ops[i], T.i64) for i in (self.n, self.inc))
        helper = f"enzpy.{'c' if self.is_complex(call) else ''}nrm2_tangent.{ft.suffix}"
        ensure(fm.module, helper)
        for j in range(fm.width):
            t = b.call(helper, ft, [n, c.ops[self.x], inc, fm.shadow(call.ops[self.x], call)[j]])
            b.store(t, fm.shadow(call.ops[self.out], call)[j])


def register_gemm(name: str, **indices) -> Gemm:
    r = Gemm(name, **indices)
    BLAS[name] = r
    return r


def register_gemv(name: str, **indices) -> Gemv:
    r = Gemv(name, **indices)
    BLAS[name] = r
    return r


def register_nrm2(name: str, **indices) -> Nrm2:
    r = Nrm2(name, **indices)
    BLAS[name] = r
    return r
