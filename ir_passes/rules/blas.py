"""BLAS-style rules: calls whose arguments are whole vectors, differentiated as a unit (Enzyme has
dedicated rules for dot, axpy, gemv, gemm rather than differentiating the library's code).

Each record says where its arguments are and carries its emitters, so adding a routine (a gemv)
is one record here: the analyses ask `output(call)` for the memory it writes, reverse mode calls
`reverse`, the forward sweep `save_input` for an input a later write may change, forward mode
`tangent`.

`dot(n, x, y) -> *out`: its reverse is
  d = shadow(out); shadow(out) = 0; shadow(x) += d * y; shadow(y) += d * x,
its tangent dot(n, x', y) + dot(n, x, y'). x and y must hold their values as of the call when the
reverse runs: when a later write may change them, the forward sweep copies them aside (freed with
the call's other allocations).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ir.edit import emit_at
from ..ir.instructions import Instruction
from ..ir.values import Constant, ConstFloat, ConstInt
from ..runtime import heap
from ..runtime.helpers import ensure

BLAS: dict = {}          # callee name -> its record
INPUT = "blas input"     # tape key tag: (INPUT, call, argument index) of a copied input vector


def lookup_blas(name: str):
    """The record of callee `name`, or None."""
    return BLAS.get(name)


@dataclass(frozen=True)
class Dot:
    """`*out = dot(n, x, y)`; the fields are argument indices."""
    name: str
    n: int          # argument index of the length
    x: int
    y: int
    out: int        # pointer receiving the result
    kind: int | None = None   # argument index of a BLAS type char ('d', 's'), if any

    def output(self, call):
        """The pointer the call writes."""
        return call.ops[self.out]

    def element_type(self, call, types):
        """The float type of the vectors (`types`: the function's TypeInfo), or None."""
        if self.kind is not None and isinstance(call.ops[self.kind], ConstInt):
            return {ord("d"): T.f64, ord("s"): T.f32}.get(call.ops[self.kind].value)
        return types.float_type_behind(call.ops[self.x])

    # --- reverse mode
    def inputs_change_later(self, g, call) -> bool:
        """May a write after the call change x or y before the reverse sweep reads them?"""
        for w, q in g.alias.writes:
            if w is call or not g.alias.may_run_after(call, w):
                continue
            if q is None or any(g.alias.may_alias(call.ops[k], q) for k in (self.x, self.y)):
                return True
        return False

    def reverse(self, g, call, block, b) -> None:
        out = call.ops[self.out]
        if not g.act.has_shadow(out):
            return
        ft = self.element_type(call, g.types)
        if ft is None:
            raise g.unsupported(f"`{call.callee_name}` on data of unknown float type", call)
        sout = g.avail.shadow(out, block, b)
        d = b.load(ft, sout)
        b.store(ConstFloat(ft, 0.0), sout)
        n = b.cast("sext", g.avail.primal(call.ops[self.n], block, b), T.i64)
        if self.inputs_change_later(g, call):
            home = g.loops.loop_of(call.block)
            xs = [g.tape.read(b, g.tape.entry((INPUT, call, k), T.ptr, home, "a vector a later write "
                                              "may change", source=call), block)
                  for k in (self.x, self.y)]
        else:
            xs = [g.avail.primal(call.ops[k], block, b) for k in (self.x, self.y)]
        null = Constant(T.ptr, "null")
        shadows = [g.avail.shadow(call.ops[k], block, b) if g.act.has_shadow(call.ops[k]) else null
                   for k in (self.x, self.y)]
        helper = f"enzpy.dot_adjoint.{ft.suffix}"
        ensure(g.module, helper)
        b.call(helper, T.void, [n, xs[0], xs[1], shadows[0], shadows[1], d])

    def save_input(self, fwd, key, e) -> None:
        """Forward sweep: copy input vector `key[2]` aside for the reverse sweep (tape entry `e`),
        freed at the end."""
        g = fwd.g
        _, call, k = key
        fcall = fwd.vmap[call]

        def copy(b):
            ft = self.element_type(call, g.types)
            n = b.cast("sext", fcall.ops[self.n], T.i64)
            size = b.mul(n, ConstInt(T.i64, T.size_of(ft)))
            buf = heap.allocate(b, size)
            b.call("llvm.memcpy.p0.p0.i64", T.void, [buf, fcall.ops[k], size, ConstInt(T.i1, 0)])
            ensure(g.module, "enzpy.push_allocation")
            b.call("enzpy.push_allocation", T.void, [g.tape.frame.address(b, g.tape.allocation_list()), buf])
            g.tape.write(b, e, buf)
        blk = fcall.block
        emit_at(g.module, blk, blk.instructions.index(fcall) + 1, copy, "dotcopy")

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
            raise fm.unsupported(f"`{call.callee_name}` on data of unknown float type", call)
        b, sout = fm.b, fm.shadow(out, call)
        for j in range(fm.width):
            total = None
            for k in vecs:
                slot = fm.entry_slot(ft, "dot.t")
                ops = list(c.ops)
                ops[k] = fm.shadow(call.ops[k], call)[j]
                ops[self.out] = slot
                b.emit(Instruction("call", c.type, ops, callee=c.callee, arg_attrs=["" for _ in ops],
                                   fnty_text=c.fnty_text))
                t = b.load(ft, slot)
                total = t if total is None else b.fadd(total, t)
            b.store(total, sout[j])


def register_dot(name: str, n: int, x: int, y: int, out: int, kind: int | None = None) -> Dot:
    d = Dot(name, n, x, y, out, kind)
    BLAS[name] = d
    return d
