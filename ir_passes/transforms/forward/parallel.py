"""Forward mode of a parallel-for launch (rules/parallel.py): tangents on all threads.

The body becomes a function of its own (common/parallel_body.py) whose forward version
(calls.forward_name) runs as the task of the same launcher, on the same schedule. Its tangent
writes follow the primal's writes, so they need no atomics. The launch passes a record:

    args'[n + w*D] = the schedule, a_1..a_{n-1}, then the w tangents of each shadowed a_j
    steps'[...]    = the schedule's step, then 0
    steps, failed  = the launch's steps array, and whether a task's body raised

A body that raised makes the function return the launcher's error status at its end
(`status`), as reverse mode does.
"""
from __future__ import annotations

from ...ir import types as T
from ...ir.builder import MathBuilder
from ...ir.instructions import Instruction
from ...ir.values import Constant, ConstInt, Global
from ...options import Activity
from ...rules.parallel import lookup_parallel, thread_ids
from ...runtime import heap
from ..common.parallel_body import (at, counts_up_from_zero, flag_failure, make_body, stored_arguments,
                                    task_function)
from .calls import forward_name

FAILED = "parallel failed"     # module.derived: forward function name -> its failure flag slot


def launches(fm, inst) -> bool:
    """Is inst a parallel-for launch whose arguments hold shadowed memory?"""
    rec = lookup_parallel(inst.callee_name)
    return rec is not None and fm.has_shadow(inst.ops[rec.args])


def launch(fm, inst) -> None:
    """Emit the launch of the body's forward version in place of the primal launch."""
    rec = lookup_parallel(inst.callee_name)
    n, inner = inst.ops[rec.array_count], inst.ops[rec.inner_ndim]
    if not (isinstance(n, ConstInt) and isinstance(inner, ConstInt) and
            isinstance(inst.ops[rec.body], Global)):
        raise fm.unsupported("a parallel-for launch not in the launcher's usual form", inst)
    n = n.value
    stored = stored_arguments(fm.primal, inst.ops[rec.args], n)
    if any(not v for v in stored[1:]):
        raise fm.unsupported("an argument of a parallel loop is not found", inst)
    dup = [False] + [any(fm.has_shadow(v) for v in stored[j]) for j in range(1, n)]
    if any(dup[j] and not all(fm.has_shadow(v) for v in stored[j]) for j in range(1, n)):
        raise fm.unsupported("an argument of a parallel loop is sometimes differentiable memory "
                             "and sometimes not", inst)
    body = make_body(fm.module, inst.ops[rec.body].name, n, thread_ids(rec), rec.raise_calls,
                     counts_up_from_zero(fm.primal, rec, stored[0]))
    act = tuple([Activity.CONST] * 6 + [Activity.DUP if d else Activity.CONST for d in dup[1:]])
    target = forward_name(fm, body, act)
    ndup = sum(dup)
    width = n + fm.width * ndup
    task = _task(fm.module, target, rec, n, ndup, fm.width, width)
    _emit(fm, inst, rec, dup, width, inner.value, task)


def _emit(fm, inst, rec, dup, width, inner, task) -> None:
    b, i64 = fm.b, T.i64
    n = len(dup)
    args, steps = fm.val(inst.ops[rec.args]), fm.val(inst.ops[rec.steps])
    record = heap.allocate(b, ConstInt(i64, 16 * width + 16))
    lanes = fm.shadow(inst.ops[rec.args], inst)
    sstep = b.load(i64, steps)
    k = n
    for j in range(n):
        b.store(b.load(T.ptr, at(b, args, 8 * j)), at(b, record, 8 * j))
        b.store(sstep if j == 0 else ConstInt(i64, 0), at(b, record, 8 * (width + j)))
        if not dup[j]:
            continue
        for lane in lanes:
            b.store(b.load(T.ptr, at(b, lane, 8 * j)), at(b, record, 8 * k))
            b.store(ConstInt(i64, 0), at(b, record, 8 * (width + k)))
            k += 1
    b.store(steps, at(b, record, 16 * width))
    b.store(ConstInt(i64, 0), at(b, record, 16 * width + 8))
    ops = [Global(T.ptr, task), record, fm.val(inst.ops[rec.dims]), at(b, record, 8 * width),
           record, ConstInt(i64, inner), ConstInt(i64, width), fm.val(inst.ops[rec.threads])]
    b.call(rec.name, T.void, ops)
    failed = b.load(i64, at(b, record, 16 * width + 8))
    flag = _flag(fm, rec)
    b.store(b.binop("or", b.load(i64, flag), failed), flag)
    heap.free(b, record)


def _flag(fm, rec):
    """The function's failure flag (an i64 stack slot, zeroed on entry)."""
    flags = fm.module.derived.setdefault(FAILED, {})
    if fm.fn.name not in flags:
        slot = fm.entry_slot(T.i64, "parallel.failed")
        entry = slot.block
        entry.insert(1, Instruction("store", T.void, [ConstInt(T.i64, 0), slot]))
        flags[fm.fn.name] = (slot, rec.error_status)
    return flags[fm.fn.name][0]


def status(fm, value):
    """The status the function returns in place of `value`: the launcher's error status when
    a launch's body raised."""
    flags = fm.module.derived.get(FAILED, {})
    if fm.fn.name not in flags or not isinstance(value.type, T.IntType):
        return value
    slot, error = flags[fm.fn.name]
    b = fm.b
    clean = b.icmp("eq", b.load(T.i64, slot), ConstInt(T.i64, 0))
    return b.select(clean, value, ConstInt(value.type, error))


def _task(module, target, rec, n, ndup, lanes, width) -> str:
    """task(args', dims', steps', record): the body's forward version on this task's entries."""
    name = f"{target}.task"
    if name in module.functions:
        return name
    fn = task_function(name)
    b = MathBuilder(module, fn.add_block("entry"))
    args, dims, _, record = fn.params
    tid = b.call(rec.thread_id, T.i64, [])
    arrays = [b.load(T.ptr, at(b, args, 8 * j)) for j in range(n)]
    tangents = [b.load(T.ptr, at(b, args, 8 * (n + k))) for k in range(lanes * ndup)]
    steps = b.load(T.ptr, at(b, record, 16 * width))
    code = b.call(target, T.i32, [args, dims, steps, Constant(T.ptr, "null"), tid, *arrays,
                                  *tangents])
    flag_failure(b, record, 16 * width + 8, code)
    b.ret()
    module.add_function(fn)
    return name
