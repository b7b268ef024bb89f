"""Block sums for privatised shadow updates (shadow_updates.py), per target.

`@enzpy.block_sum.nvptx.<T>(ptr %dst, T %v)`: every thread of a CUDA block calls it with its own
value (all of them: it contains barriers); the block adds the values in shared memory (a tree,
1024 slots, any block shape) and thread 0 adds the sum into *dst with one atomic. A barrier at
the end lets the next call reuse the buffer.
"""
from __future__ import annotations

from ..ir import types as T
from .helpers import merge
from .source import load

FILES = {"nvptx": "block_sum_nvptx"}


def ensure(module, target: str, t: T.Type) -> str:
    """Add the block sum of `target` for float type t to the module once; return its name."""
    name = f"enzpy.block_sum.{target}.{t.suffix}"
    if name in module.functions:
        return name
    text = load(FILES[target], SUFFIX=t.suffix, TYPE=t, ALIGN=T.size_of(t))
    merge(module, text)
    return name
