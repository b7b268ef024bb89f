"""Deferred rank-1 updates: `dA += alpha u v^T` on every reverse iteration of a loop, added as one
gemm when the reverse sweep leaves the loop.

A BLAS record's reverse adds a rank-1 update into the shadow of its matrix (gemv:
dA += alpha dy x^T). In a loop L where A, its shape (m, n, lda) and the host's gemm are the same
on every iteration, and nothing in L writes memory that may alias A and has a shadow (so no
reverse code of L reads or zeroes shadow(A): loads and other BLAS calls only add into it), the
updates commute with everything else L's reverse does to that memory. Each reverse iteration
then appends u (m elements) and v (n elements) as one column pair to a buffer parked with the
tape, and the reverse of L's entry edge adds them all at once: dA += alpha U V^T, one gemm of
inner dimension the number of iterations, instead of one pass over dA per iteration (an RNN's
dW = sum_t dy_t h_t^T). A buffer holding more than LIMIT bytes is added and emptied at once, so
its memory stays bounded whatever the trip count (a checkpointed loop's budget does not count
it). The loop chosen is the outermost one where this holds, as deferred.py chooses for loads.
Order of accumulation is not part of the contract (docs/semantics.md).
"""
from __future__ import annotations

from dataclasses import dataclass

from ....ir import types as T
from ....ir.builder import MathBuilder
from ....ir.instructions import Instruction
from ....ir.module import Function
from ....ir.values import Argument, Constant, ConstFloat, ConstInt
from ....rules.blas import KINDS, guarded_product, lookup_blas
from ....rules.effects import allocator_or_inactive, pure_math, writes_nothing
from ....rules.lapack import call_gemm, gemm_record
from ....runtime.helpers import ensure

MEMCPY = "llvm.memcpy.p0.p0.i64"


LIMIT = 1 << 18     # bytes of column pairs a buffer holds before they are added (bounds memory)


@dataclass
class Deferral:
    """One gemv's updates deferred over `loop`: the column pairs' buffer (tape fields)."""
    loop: object
    fn: Function       # _gemm_function
    a: object          # the primal matrix pointer
    dims: tuple        # primal m, n, lda
    ft: T.Type
    fields: tuple      # (buffer, capacity, bytes used)


def _invariant(v, loop) -> bool:
    return not isinstance(v, Instruction) or v.block not in loop.blocks


def _writes(inst) -> list | None:
    """The pointers `inst` may write, or None when unknown (an unrecorded call)."""
    if inst.opcode == "store":
        return [inst.ops[1]]
    if inst.opcode != "call":
        return []
    name = inst.callee_name or ""
    if name.startswith(("llvm.memcpy", "llvm.memmove", "llvm.memset")):
        return [inst.ops[0]]
    if pure_math(inst) or writes_nothing(name) or allocator_or_inactive(name) or \
            name.startswith(("llvm.lifetime", "llvm.dbg", "llvm.assume")):
        return []
    record = lookup_blas(name)
    return list(record.outputs(inst)) if record is not None else None


def _quiet(g, loop, a) -> bool:
    """Does nothing in `loop` write memory that may alias a and has a shadow?"""
    for blk in loop.blocks:
        for inst in blk.instructions:
            qs = _writes(inst)
            if qs is None:
                return False
            if any(g.act.has_shadow(q) and g.alias.may_alias(a, q) for q in qs):
                return False
    return True


def _loop_for(g, call, a, dims):
    """The outermost loop around `call` over which its updates of shadow(a) may wait, or None."""
    if g.split or g.updates.threads is not None or gemm_record() is None:
        return None
    loop, chosen = g.loops.loop_of(call.block), None
    while loop is not None and loop not in g.fused and \
            all(_invariant(v, loop) for v in (a,) + dims) and _quiet(g, loop, a):
        chosen, loop = loop, loop.parent
    return chosen


def rank1(g, b, call, block, ft, alpha, u, v, adjoint, a, dims) -> None:
    """shadow(a) += alpha u v^T for gemv-like `call` (dims: its primal m, n, lda; u has m
    elements, v n; `adjoint` names the adjoint factor, "a" for u, "b" for v, which the strong
    zero guards: rules/blas.py guarded_product): at once, or appended to the call's deferral
    when a loop allows it."""
    loop = _loop_for(g, call, a, dims)
    m, n, lda = (b.cast("sext", g.avail.primal(x, block, b), T.i64) for x in dims)
    if loop is None:
        helper = f"enzpy.rank1.{ft.suffix}"
        ensure(g.module, helper)
        da = g.avail.shadow(a, block, b)
        guarded_product(b, ft, alpha, adjoint, False, True, m, n, ConstInt(T.i64, 1), u, m, v, n,
                        da, lda, lambda rows, _n, _k: b.call(
                            helper, T.void, [rows, n, ConstFloat(ft, alpha), u, v, da, lda]))
        return
    d = g.rank1_deferred.get(id(call))
    if d is None:
        fields = (g.tape.new_field(T.ptr, g.null_ptr), g.tape.new_field(T.i64, ConstInt(T.i64, 0)),
                  g.tape.new_field(T.i64, ConstInt(T.i64, 0)))
        g.tape.buffers += list(fields[:2])
        fn = _gemm_function(g, call, ft, alpha, adjoint, f"{g.fn.name}.rank1.{len(g.rank1_deferred)}")
        d = g.rank1_deferred[id(call)] = Deferral(loop, fn, a, dims, ft, fields)
    mb, nb = (b.mul(x, ConstInt(T.i64, T.size_of(ft))) for x in (m, n))
    ensure(g.module, "enzpy.arena_push")
    g.module.declare(MEMCPY, T.void, [T.ptr, T.ptr, T.i64, T.i1])
    addr = [g.tape.frame.address(b, f) for f in d.fields]
    off = b.call("enzpy.arena_push", T.i64, addr + [Constant(T.ptr, "null"), b.add(mb, nb)])
    col = b.gep(T.i8, g.tape.load(b, d.fields[0]), [off])
    b.call(MEMCPY, T.void, [col, u, mb, ConstInt(T.i1, 0)])
    b.call(MEMCPY, T.void, [b.gep(T.i8, col, [mb]), v, nb, ConstInt(T.i1, 0)])
    _add(g, b, d, (m, n, lda), g.avail.shadow(a, block, b), LIMIT)


def flush(g, loop, src, b) -> None:
    """Add the deferred updates of `loop` into their shadows and empty the buffers: the reverse
    sweep leaves the loop through the reverse of its entry edge from `src`."""
    for d in [d for d in g.rank1_deferred.values() if d.loop is loop]:
        dims = tuple(b.cast("sext", g.avail.primal(x, src, b), T.i64) for x in d.dims)
        _add(g, b, d, dims, g.avail.shadow(d.a, src, b), 0)


def _add(g, b, d, dims, da, limit) -> None:
    """Call d's gemm function: the pairs into da when the buffer holds more than `limit` bytes."""
    addr = [g.tape.frame.address(b, f) for f in (d.fields[0], d.fields[2])]
    b.call(d.fn.name, T.void, addr + list(dims) + [da, ConstInt(T.i64, limit)])


def _gemm_function(g, call, ft, alpha, adjoint, name):
    """`void name(ptr buffer, ptr used, i64 m, i64 n, i64 lda, ptr da, i64 limit)`: when the
    buffer holds more than `limit` bytes, da += alpha U V^T over its column pairs (one gemm,
    under the strong zero of the `adjoint` factor), and the buffer is emptied."""
    params = [Argument(t, x, index=k) for k, (t, x) in enumerate(
        [(T.ptr, "buf"), (T.ptr, "used"), (T.i64, "m"), (T.i64, "n"), (T.i64, "lda"),
         (T.ptr, "da"), (T.i64, "limit")])]
    buf, usedp, m, n, lda, da, limit = params
    fn = Function(name, T.void, params, prefix="define internal")
    fn.generated = True
    entry, go, done = fn.add_block("entry"), fn.add_block("gemm"), fn.add_block("done")
    b = MathBuilder(g.module, entry)
    sa, one = b.alloca(ft), b.alloca(ft)
    used = b.load(T.i64, usedp)
    b.cbr(b.icmp("ugt", used, limit), go, done)
    b = MathBuilder(g.module, go)
    size = ConstInt(T.i64, T.size_of(ft))
    # arena_push pads each pair to 16 bytes: the columns lie `ld` elements apart
    stride = b.binop("and", b.add(b.mul(b.add(m, n), size), ConstInt(T.i64, 15)),
                     ConstInt(T.i64, -16))
    ld = b.binop("udiv", stride, size)
    us = b.load(T.ptr, buf)
    b.store(ConstFloat(ft, alpha), sa)
    b.store(ConstFloat(ft, 1.0), one)
    kind = ConstInt(T.i8, next(c for c, t in KINDS.items() if t == ft))
    k, vs = b.binop("udiv", used, stride), b.gep(T.i8, us, [b.mul(m, size)])
    guarded_product(b, ft, alpha, adjoint, False, True, m, n, k, us, ld, vs, ld, da, lda,
                    lambda rows, _n, _k: call_gemm(b, g.module, call, kind, False, True, rows, n, k,
                                                   sa, us, ld, vs, ld, one, da, lda))
    b.store(ConstInt(T.i64, 0), usedp)
    b.br(done)
    MathBuilder(g.module, done).ret()
    g.module.add_function(fn)
    return fn
