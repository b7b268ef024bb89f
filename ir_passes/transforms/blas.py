"""The reverse of BLAS-style calls described in rules/blas.py."""
from __future__ import annotations

from ..ir import types as T
from ..ir.values import Constant, ConstFloat, ConstInt
from ..rules.blas import DOTS
from . import heap


def element_type(g, inst, dot):
    if dot.kind is not None and isinstance(inst.ops[dot.kind], ConstInt):
        return {ord("d"): T.f64, ord("s"): T.f32}.get(inst.ops[dot.kind].value)
    return g.types.float_type_behind(inst.ops[dot.x])


def inputs_change_later(g, inst, dot) -> bool:
    """May a write after the call change x or y before the reverse sweep reads them?"""
    for w, q in g.alias.writes:
        if w is inst or not g.alias.may_run_after(inst, w):
            continue
        if q is None or any(g.alias.may_alias(inst.ops[k], q) for k in (dot.x, dot.y)):
            return True
    return False


def reverse_dot(g, inst, block, b) -> None:
    dot = DOTS[inst.callee_name]
    out = inst.ops[dot.out]
    if not g.act.has_shadow(out):
        return
    ft = element_type(g, inst, dot)
    if ft is None:
        raise g.unsupported(f"`{inst.callee_name}` on data of unknown float type", inst)
    sout = g.avail.shadow(out, block, b)
    d = b.load(ft, sout)
    b.store(ConstFloat(ft, 0.0), sout)
    n = b.cast("sext", g.avail.primal(inst.ops[dot.n], block, b), T.i64)
    if inputs_change_later(g, inst, dot):
        home = g.loops.loop_of(inst.block)
        xs = [g.tape.read(b, g.tape.entry(("dotcopy", inst, k), T.ptr, home, "a vector a later write "
                                          "may change", source=inst), block) for k in (dot.x, dot.y)]
    else:
        xs = [g.avail.primal(inst.ops[k], block, b) for k in (dot.x, dot.y)]
    null = Constant(T.ptr, "null")
    shadows = [g.avail.shadow(inst.ops[k], block, b) if g.act.has_shadow(inst.ops[k]) else null
               for k in (dot.x, dot.y)]
    from .runtime import ensure
    helper = f"enzpy.dot_adjoint.{ft.suffix}"
    ensure(g.module, helper)
    b.call(helper, T.void, [n, xs[0], xs[1], shadows[0], shadows[1], d])


def copy_inputs(fwd, key, e) -> None:
    """Forward: copy a dot's input vector aside for the reverse sweep, freed at the end."""
    from ..ir.builder import MathBuilder
    from ..ir.module import Block
    from .runtime import ensure
    g = fwd.g
    _, inst, k = key
    dot = DOTS[inst.callee_name]
    fcall = fwd.vmap[inst]
    tmp = Block("dotcopy")
    b = MathBuilder(g.module, tmp)
    ft = element_type(g, inst, dot)
    n = b.cast("sext", fcall.ops[dot.n], T.i64)
    size = b.mul(n, ConstInt(T.i64, T.size_of(ft)))
    buf = heap.allocate(b, size)
    b.call("llvm.memcpy.p0.p0.i64", T.void, [buf, fcall.ops[k], size, ConstInt(T.i1, 0)])
    ensure(g.module, "enzpy.push_allocation")
    b.call("enzpy.push_allocation", T.void, [g.tape.frame.address(b, g.tape.allocation_list()), buf])
    g.tape.write(b, e, buf)
    blk = fcall.block
    at = blk.instructions.index(fcall) + 1
    for j, i in enumerate(tmp.instructions):
        blk.insert(at + j, i)
