"""Warp-aggregated atomic adds for shared shadow updates on the GPU (shadow_updates.py).

`@enzpy.warp_add.nvptx.<T>(ptr %p, T %v)` adds v into *p atomically, like `atomicrmw fadd`. When
the whole warp is converged on the call and every lane adds into the same address (n-body's
`pos[j]` in a loop over bodies, where every thread of the warp is at the same j), the lanes first
sum their values with butterfly shuffles and lane 0 makes the one atomic add: 32 atomics to one
address become one. Otherwise (some lanes inactive, or addresses that differ: a gather) each lane
adds its own value. Needs `activemask` and `match.any.sync` (sm_70 and later).
"""
from __future__ import annotations

from ..ir import types as T
from .helpers import merge

_STEP = """
  %b{k} = bitcast {T} %s{k} to {I}
{split}
  %o{k} = bitcast {I} %ob{k} to {T}
  %s{n} = fadd {T} %s{k}, %o{k}"""

_SPLIT64 = """  %lo{k} = trunc i64 %b{k} to i32
  %hi{k}.w = lshr i64 %b{k}, 32
  %hi{k} = trunc i64 %hi{k}.w to i32
  %olo{k} = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %lo{k}, i32 {off}, i32 31)
  %ohi{k} = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %hi{k}, i32 {off}, i32 31)
  %olo{k}.w = zext i32 %olo{k} to i64
  %ohi{k}.w = zext i32 %ohi{k} to i64
  %ohi{k}.s = shl i64 %ohi{k}.w, 32
  %ob{k} = or i64 %ohi{k}.s, %olo{k}.w"""

_SPLIT32 = """  %ob{k} = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %b{k}, i32 {off}, i32 31)"""

_TEMPLATE = """
declare i32 @llvm.nvvm.activemask()
declare i32 @llvm.nvvm.match.any.sync.i64(i32, i64)
declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()

define internal void @{name}(ptr %p, {T} %v) alwaysinline {{
entry:
  %mask = call i32 @llvm.nvvm.activemask()
  %full = icmp eq i32 %mask, -1
  br i1 %full, label %match, label %single
match:
  %addr = ptrtoint ptr %p to i64
  %peers = call i32 @llvm.nvvm.match.any.sync.i64(i32 -1, i64 %addr)
  %same = icmp eq i32 %peers, -1
  br i1 %same, label %reduce, label %single
reduce:
  %s0 = fadd {T} %v, {zero}{steps}
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %first = icmp eq i32 %lane, 0
  br i1 %first, label %one, label %done
one:
  %old.all = atomicrmw fadd ptr %p, {T} %s5 monotonic, align {A}
  br label %done
single:
  %old.own = atomicrmw fadd ptr %p, {T} %v monotonic, align {A}
  br label %done
done:
  ret void
}}
"""


def text(t: T.Type) -> str:
    """The helper's module text for float type t."""
    wide = T.size_of(t) == 8
    steps = "".join(
        _STEP.format(k=k, n=k + 1, T=t, I="i64" if wide else "i32",
                     split=(_SPLIT64 if wide else _SPLIT32).format(k=k, off=off))
        for k, off in enumerate((16, 8, 4, 2, 1)))
    return _TEMPLATE.format(name=name_of(t), T=t, A=T.size_of(t), steps=steps,
                            zero="-0.0")


def name_of(t: T.Type) -> str:
    return f"enzpy.warp_add.nvptx.{t.suffix}"


def ensure(module, t: T.Type) -> str:
    """Add the helper for float type t to the module once; return its name."""
    name = name_of(t)
    if name in module.functions:
        return name
    merge(module, text(t))
    return name
