"""Privatised shadows of a parallel loop's arrays (parallel_launch.py).

An array the body only reads, but whose shadow several iterations update (a gather's
`x[pairs[e, 0]]`, every body's `pos[j]` in n-body, an Active scalar read by all), gets a zeroed
copy of its shadow per task in the reverse sweep: the task's updates are plain adds into its
copy, and after the reverse launch the copies are added into the shadow one task after the
other, in schedule order. No atomics, and the sums do not depend on which thread ran what.

`ParallelUpdates` chooses: AUTO privatises such arrays whose extent is known, by size at each
call: the body's gradient is built twice, with copies and with atomic adds (`atomicrmw fadd`)
in their place, and the launch runs the copies only while the copied shadows, times the
launch's threads, hold at most max(PRIVATE_ELEMENTS, COPY_FACTOR x the loop's iterations)
elements: zeroing and summing T copies of a large array that few iterations touch costs more
than their atomic adds. COPY_FACTOR is measured (`python -m benchmarks.parallel --crossover`,
docs/parallel.md): on a gather, copies stopped paying at about 8 shadow elements per iteration
with 2 threads and at about 16 with 1. ATOMIC
privatises none; DETERMINISTIC always privatises and refuses a body that would still need an
atomic add.
"""
from __future__ import annotations

from dataclasses import dataclass

from ....analysis.alias import alias_analysis
from ....analysis.sharing import PRIVATE, sharing_analysis
from ....analysis.types import roots
from ....errors import UnsupportedError
from ....ir import types as T
from ....ir.parser import parse_module
from ....ir.values import Argument, ConstInt
from ....rules.parallel import ParallelUpdates
from ....runtime.helpers import HELPERS, add_file, ensure
from ...common.extent import extent_bounds
from ...common.parallel_body import SCHED, TID, depends_on, iterations
from ..shadows.shadow_updates import ATOMIC


PRIVATE_ELEMENTS = 1 << 16     # copies this small (all threads' together) whatever the loop
COPY_FACTOR = 16    # copies while their elements over all threads <= this x the iterations
BY_SIZE = (f", atomic at a call where the copies exceed max({PRIVATE_ELEMENTS}, {COPY_FACTOR} x "
           f"the loop's iterations) elements over all threads")


@dataclass(frozen=True)
class Copy:
    """Argument `slot` of the launch gets per-task copies of its shadow of floats `type`; its
    extent comes from `extent` (a parameter's common.extent.Extent) or is `size` bytes."""
    slot: int
    type: T.Type
    extent: object = None
    size: int = 0


def choose(g, body, stored, dup, noalias, mode, find=iterations) -> list:
    """The launch's arguments to privatise (module docstring); `find(body)`: its
    analysis.sharing.Iterations."""
    if mode is ParallelUpdates.ATOMIC:
        return []
    alias = alias_analysis(body, noalias_params=noalias)
    sharing = sharing_analysis(body, find(body), alias)
    out = []
    for j in range(1, len(dup)):
        param = body.params[SCHED + j]
        if not dup[j] or alias.writes_to(param) or len(stored[j]) != 1:
            continue
        accesses = [a for a in sharing.accesses.values()
                    if any(r is param for r in roots(a.pointer))]
        types = {a.inst.type for a in accesses if a.inst.opcode == "load" and a.inst.type.is_float}
        if len(types) != 1 or all(a.kind == PRIVATE for a in accesses):
            continue
        v = stored[j][0]
        if isinstance(v, Argument) and v.index in g.extents:
            out.append(Copy(j, types.pop(), extent=g.extents[v.index]))
        elif getattr(v, "opcode", "") == "alloca" and not v.ops:
            out.append(Copy(j, types.pop(), size=T.size_of(v.source_type)))
    return out


def owned(body, copies):
    """Threads.owned for the body: a pointer into a privatised array, or into a reduction's
    partial result (indexed by the thread id: no other running thread touches it)."""
    params = {id(body.params[SCHED + c.slot]) for c in copies}
    by_thread = depends_on(body, body.params[TID])
    return lambda p: id(p) in by_thread or bool(params) and all(id(r) in params for r in roots(p))


def bounds(b, g, copy):
    """(offset of the first byte, size in bytes) of a privatised array, built at b from the
    primal's values (the forward sweep maps them)."""
    if copy.extent is not None:
        return extent_bounds(b, g.primal.params, copy.extent)
    return ConstInt(T.i64, 0), ConstInt(T.i64, copy.size)


def small(b, copied, iterations, threads):
    """i1: do the copies, [(size in bytes, float type)], times `threads`, hold at most
    max(PRIVATE_ELEMENTS, COPY_FACTOR x iterations) elements?"""
    total = ConstInt(T.i64, 0)
    for nbytes, ty in copied:
        total = b.add(total, b.binop("udiv", nbytes, ConstInt(T.i64, T.size_of(ty))))
    total = b.mul(total, threads)
    scaled = b.mul(iterations, ConstInt(T.i64, COPY_FACTOR))
    bound = b.select(b.icmp("sgt", scaled, ConstInt(T.i64, PRIVATE_ELEMENTS)), scaled,
                     ConstInt(T.i64, PRIVATE_ELEMENTS))
    return b.icmp("ule", total, bound)


def check_deterministic(body_name, updates, mode) -> None:
    """DETERMINISTIC: no update of the body's reverse sweep may be atomic."""
    if mode is not ParallelUpdates.DETERMINISTIC:
        return
    for u in updates.report:        # an atomic exchange consumes a location one iteration wrote
        if u.how == ATOMIC and not u.instruction.lstrip().startswith("store"):
            raise UnsupportedError(
                "deterministic=True: a parallel loop adds into a shadow that other iterations "
                "may update too, in memory the loop also writes", u.instruction,
                tuple(u.location) if u.location else None)


def sum_helper(module, ftype) -> str:
    """`sum(dst, copies, ncopies, count)`: dst[0..count) += each non-null copy, in order;
    the copies stay with the launch record."""
    name = f"enzpy.parfor.sum.{ftype.suffix}"
    if name not in HELPERS:
        add_file(name, "parfor_sum", SUFFIX=ftype.suffix, TYPE=ftype)
    ensure(module, name)
    return name


def iterations_helper(module) -> str:
    """`iterations(sched, nsched, step)`: the loop's iteration count, from its schedule (per
    entry of `step` bytes, the inclusive starts then stops of each dimension)."""
    name = "enzpy.parfor.iterations"
    if name not in module.functions:
        module.add_function(parse_module(HELPERS[name]).functions[name])   # no heap: it allocates nothing
    return name
