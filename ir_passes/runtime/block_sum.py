"""Block sums for privatised shadow updates (shadow_updates.py), per target.

`@enzpy.block_sum.nvptx.<T>(ptr %dst, T %v)`: every thread of a CUDA block calls it with its own
value (all of them: it contains barriers); the block adds the values in shared memory (a tree,
1024 slots, any block shape) and thread 0 adds the sum into *dst with one atomic. A barrier at
the end lets the next call reuse the buffer.

Deterministic sums (block_sum_det_nvptx.ll) make no float atomic: `det.nvptx.<T>(i32 %site, T %v)`
stores the block's tree sum in the block's slot of `site` in the kernel's scratch memory; after
every site, `det.last.nvptx()` takes a ticket (an integer atomic) in thread 0 and is true in the
block that finished last, whose `det.total.nvptx.<T>(ptr %dst, i32 %site, i1 %last)` adds the
slots in block order into *dst. The bits do not depend on which block ran when.
"""
from __future__ import annotations

from ..ir import types as T
from .helpers import merge
from .source import load

FILES = {"nvptx": "block_sum_nvptx"}
DETERMINISTIC = {"nvptx": "block_sum_det_nvptx"}
SLOTS_AT, SLOT_BYTES = 16, 8      # the scratch: a ticket counter, then 8 bytes per (site, block)


def ensure(module, target: str, t: T.Type) -> str:
    """Add the block sum of `target` for float type t to the module once; return its name."""
    name = f"enzpy.block_sum.{target}.{t.suffix}"
    if name in module.functions:
        return name
    text = load(FILES[target], SUFFIX=t.suffix, TYPE=t, ALIGN=T.size_of(t))
    merge(module, text)
    return name


def ensure_deterministic(module, target: str, t: T.Type) -> tuple:
    """Add the deterministic block sum of `target` for float type t once; return the names of
    its (partial sum, total, last block) functions."""
    sum_, total = f"enzpy.block_sum.det.{target}.{t.suffix}", f"enzpy.block_sum.det.total.{target}.{t.suffix}"
    if sum_ not in module.functions:
        merge(module, load(DETERMINISTIC[target], SUFFIX=t.suffix, TYPE=t, ALIGN=T.size_of(t)))
    return sum_, total, f"enzpy.block_sum.det.last.{target}"


def scratch_bytes(sites: int, blocks: int) -> int:
    """The bytes of scratch memory a deterministic gradient with `sites` sums needs for `blocks`."""
    return SLOTS_AT + SLOT_BYTES * sites * blocks
