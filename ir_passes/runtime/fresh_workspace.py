"""Tape arrays that live for one call only.

A top-level gradient keeps its tape arrays between calls in a workspace parked in a global slot
(runtime/workspace.ll, `enzpy.take` / `enzpy.park`). Code that differentiates a gradient
(forward mode over it: Hessian-vector products, batched seeds; an outer gradient over an inner
one: nested AD) needs the tapes in ordinary memory: `fresh_tapes` replaces those helpers by
versions that keep nothing. `take` starts from an empty frame; `park` frees the tape arrays (the
first `pointers` fields are pointers, as workspace.ll's park parks them) with the heap's free
(runtime/heap.py: the module's, else the registered one), skipping null.
"""
from __future__ import annotations

from ..ir.parser import parse_module
from ..ir.printer import print_module
from . import heap
from .source import load



def fresh_tapes(module) -> None:
    """Replace the workspace helpers of `module` (an ir_passes Module), when it uses them."""
    if not any(n in module.functions for n in ("enzpy.take", "enzpy.park")):
        return
    free = (module.heap or heap.registered()).free
    for fn in parse_module(load("fresh_workspace", FREE=free)).functions.values():
        if not fn.is_declaration or fn.name not in module.functions:
            module.add_function(fn)


def fresh_tapes_text(text: str) -> str:
    """`text` (module text) with the workspace helpers replaced, when it uses them."""
    if "@enzpy.take(" not in text and "@enzpy.park(" not in text:
        return text
    module = parse_module(text)
    fresh_tapes(module)
    return print_module(module)
