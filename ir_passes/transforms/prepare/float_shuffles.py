"""Warp shuffles of a float's bits become float shuffles, before AD (the pass float-shuffles).

`shfl.sync` moves 32-bit integers. A float32 goes through it as its bits, a float64 as two
halves (CUDA's `__shfl_down_sync(double)` and other CUDA front ends lower it so):

    %bits = bitcast double %v to i64            %lo = trunc i64 %bits to i32
    %hi = trunc i64 (lshr i64 %bits, 32) to i32
    %s.lo = call {i32, i1} @llvm.nvvm.shfl.sync.down.i32p(i32 %mask, i32 %lo, i32 %b, i32 %c)
    %s.hi = ... the same for %hi; both halves' extractvalue 0 zero-extended, the high one shifted
    %r = bitcast i64 (or ...) to double

Read as integers, the value would lose its derivative. The pattern becomes one call of
`float @llvm.nvvm.shfl.sync.<mode>.f32` or `double @enzpy.shfl.sync.<mode>.f64` on %v, whose
derivative rules/nvptx.py knows; the integer chain is removed when nothing else uses it (a
predicate read from it keeps its shuffle).
"""
from __future__ import annotations

import re

from ...ir import types as T
from ...ir.instructions import Instruction
from ...ir.values import Constant, ConstInt, Global
from ...runtime.warp_shuffle import shuffle_name

_SHUFFLE = re.compile(r"^llvm\.nvvm\.shfl\.sync\.(idx|up|down|bfly)\.i32p$")
_PURE = {"bitcast", "trunc", "lshr", "zext", "shl", "or", "extractvalue", "call"}


def fuse_float_shuffles(module, fn) -> int:
    """Make the float shuffles of `fn` calls of their own; return how many."""
    count = 0
    for inst in list(fn.instructions()):
        if inst.opcode != "bitcast" or not inst.type.is_float:
            continue
        found = _float32(inst) if inst.type == T.f32 else _float64(inst)
        if found is None:
            continue
        mode, value, calls = found
        last = max(calls, key=lambda c: c.block.instructions.index(c))
        name = shuffle_name(mode, inst.type.suffix)
        module.declare(name, inst.type, [T.i32, inst.type, T.i32, T.i32])
        ops = [calls[0].ops[0], value, calls[0].ops[2], calls[0].ops[3]]
        new = Instruction("call", inst.type, ops, name=inst.name, callee=Global(T.ptr, name),
                          arg_attrs=["" for _ in ops], dbg=inst.dbg)
        last.block.insert(last.block.instructions.index(last) + 1, new)
        for user in fn.instructions():
            user.ops = [new if o is inst else o for o in user.ops]
        inst.block.instructions.remove(inst)
        count += 1
    if count:
        _remove_dead(fn)
    return count


def _float32(inst):
    """bitcast (extractvalue (shfl (bitcast float %v to i32)), 0) to float -> (mode, %v, calls)."""
    call = _shuffled(inst.ops[0])
    if call is None:
        return None
    src = call.ops[1]
    if _op(src) == "bitcast" and src.ops[0].type == T.f32:
        return _SHUFFLE.match(call.callee_name).group(1), src.ops[0], [call]
    return None


def _float64(inst):
    """The two halves' shuffles of a double (see the module docstring) -> (mode, %v, calls)."""
    joined = inst.ops[0]
    if _op(joined) != "or" or inst.type != T.f64:
        return None
    halves = {}
    for part in joined.ops:
        if _op(part) == "shl" and _const(part.ops[1]) == 32 and _op(part.ops[0]) == "zext":
            halves["hi"] = _shuffled(part.ops[0].ops[0])
        elif _op(part) == "zext":
            halves["lo"] = _shuffled(part.ops[0])
    lo, hi = halves.get("lo"), halves.get("hi")
    if lo is None or hi is None or lo.block is not hi.block or lo.callee_name != hi.callee_name:
        return None
    if not all(_same(a, b) for k, (a, b) in enumerate(zip(lo.ops, hi.ops)) if k != 1):
        return None
    lo_src, hi_src = lo.ops[1], hi.ops[1]
    if _op(lo_src) != "trunc" or _op(hi_src) != "trunc" or _op(hi_src.ops[0]) != "lshr" or \
            _const(hi_src.ops[0].ops[1]) != 32:
        return None
    bits = lo_src.ops[0]
    if bits is not hi_src.ops[0].ops[0] or _op(bits) != "bitcast" or bits.ops[0].type != T.f64:
        return None
    return _SHUFFLE.match(lo.callee_name).group(1), bits.ops[0], [lo, hi]


def _shuffled(v):
    """The i32p shuffle whose value v is (`extractvalue %call, 0`), or None."""
    if _op(v) != "extractvalue" or v.indices != [0]:
        return None
    call = v.ops[0]
    if _op(call) == "call" and _SHUFFLE.match(call.callee_name) and len(call.ops) == 4:
        return call
    return None


def _op(v) -> str:
    return v.opcode if isinstance(v, Instruction) else ""


def _const(v):
    return v.value if isinstance(v, ConstInt) else None


def _same(a, b) -> bool:
    return a is b or (isinstance(a, Constant) and isinstance(b, Constant) and a.ref() == b.ref())


def _remove_dead(fn) -> None:
    """Drop the integer chains nothing uses any more (shuffles have no other effect)."""
    while True:
        used = {id(o) for i in fn.instructions() for o in i.ops}
        dead = [i for i in fn.instructions() if i.opcode in _PURE and id(i) not in used and
                (i.opcode != "call" or _SHUFFLE.match(i.callee_name))]
        if not dead:
            return
        for i in dead:
            i.block.instructions.remove(i)
