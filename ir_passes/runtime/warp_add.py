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
from .source import fill, sections

# the helper in pieces (runtime/warp_add.ll)
PIECES = sections("warp_add")


def text(t: T.Type) -> str:
    """The helper's module text for float type t."""
    wide = T.size_of(t) == 8
    split = PIECES["split64" if wide else "split32"]
    steps = "\n".join(fill(PIECES["step"], K=k, N=k + 1, SPLIT=split, OFF=off, BITS="i64" if wide else "i32", TYPE=t)
                      for k, off in enumerate((16, 8, 4, 2, 1)))
    return fill(PIECES["helper"], NAME=name_of(t), TYPE=t, ALIGN=T.size_of(t), STEPS=steps) + "\n"


def name_of(t: T.Type) -> str:
    return f"enzpy.warp_add.nvptx.{t.suffix}"


def ensure(module, t: T.Type) -> str:
    """Add the helper for float type t to the module once; return its name."""
    name = name_of(t)
    if name in module.functions:
        return name
    merge(module, text(t))
    return name
