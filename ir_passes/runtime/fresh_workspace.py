"""Tape arrays that live for one call only.

A top-level gradient keeps its tape arrays between calls in a workspace parked in a global slot
(helpers.py WORKSPACE, `enzpy.take` / `enzpy.park`). Code that differentiates a gradient
(forward mode over it: Hessian-vector products, batched seeds; an outer gradient over an inner
one: nested AD) needs the tapes in ordinary memory: `fresh_tapes` replaces those helpers by
versions that keep nothing. `take` starts from an empty frame; `park` frees the tape arrays (the
first `pointers` fields are pointers, as WORKSPACE's park parks them) with the heap's free
(runtime/heap.py: the module's, else the registered one), skipping null.
"""
from __future__ import annotations

from ..ir.parser import parse_module
from ..ir.printer import print_module
from . import heap

FRESH = """
define internal ptr @enzpy.take(ptr %slot, ptr %dst, i64 %n) {
entry:
  %bytes = mul i64 %n, 8
  call void @llvm.memset.p0.i64(ptr %dst, i8 0, i64 %bytes, i1 false)
  ret ptr null
}

define internal void @enzpy.park(ptr %slot, ptr %ws, ptr %src, i64 %n, i64 %pointers) {
entry:
  %empty = icmp sle i64 %pointers, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %p = getelementptr ptr, ptr %src, i64 %i
  %v = load ptr, ptr %p
  %null = icmp eq ptr %v, null
  br i1 %null, label %next, label %drop
drop:
  call void @"{FREE}"(ptr %v)
  br label %next
next:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %pointers
  br i1 %more, label %loop, label %done
done:
  ret void
}

declare void @"{FREE}"(ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
"""


def fresh_tapes(module) -> None:
    """Replace the workspace helpers of `module` (an ir_passes Module), when it uses them."""
    if not any(n in module.functions for n in ("enzpy.take", "enzpy.park")):
        return
    free = (module.heap or heap.registered()).free
    for fn in parse_module(FRESH.replace("{FREE}", free)).functions.values():
        if not fn.is_declaration or fn.name not in module.functions:
            module.add_function(fn)


def fresh_tapes_text(text: str) -> str:
    """`text` (module text) with the workspace helpers replaced, when it uses them."""
    if "@enzpy.take(" not in text and "@enzpy.park(" not in text:
        return text
    module = parse_module(text)
    fresh_tapes(module)
    return print_module(module)
