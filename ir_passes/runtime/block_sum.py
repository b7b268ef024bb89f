"""Block sums for privatised shadow updates (shadow_updates.py), per target.

`@enzpy.block_sum.nvptx.<T>(ptr %dst, T %v)`: every thread of a CUDA block calls it with its own
value (all of them: it contains barriers); the block adds the values in shared memory (a tree,
1024 slots, any block shape) and thread 0 adds the sum into *dst with one atomic. A barrier at
the end lets the next call reuse the buffer.
"""
from __future__ import annotations

from ..ir import types as T
from .helpers import merge

NVPTX = """
@enzpy.block_sum.buffer.{S} = internal addrspace(3) global [1024 x {T}] undef, align 8

define internal void @enzpy.block_sum.nvptx.{S}(ptr %dst, {T} %v) {{
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %nz = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %zy = mul i32 %tz, %ny
  %row = add i32 %zy, %ty
  %rowx = mul i32 %row, %nx
  %t = add i32 %rowx, %tx
  %nxy = mul i32 %nx, %ny
  %n = mul i32 %nxy, %nz
  %buf = addrspacecast ptr addrspace(3) @enzpy.block_sum.buffer.{S} to ptr
  %mine = getelementptr {T}, ptr %buf, i32 %t
  store {T} %v, ptr %mine, align {A}
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  br label %step
step:
  %s = phi i32 [ 512, %entry ], [ %s.next, %joined ]
  %low = icmp ult i32 %t, %s
  %j = add i32 %t, %s
  %there = icmp ult i32 %j, %n
  %add = and i1 %low, %there
  br i1 %add, label %sum, label %joined
sum:
  %a = load {T}, ptr %mine, align {A}
  %other = getelementptr {T}, ptr %buf, i32 %j
  %b = load {T}, ptr %other, align {A}
  %ab = fadd {T} %a, %b
  store {T} %ab, ptr %mine, align {A}
  br label %joined
joined:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %s.next = lshr i32 %s, 1
  %done = icmp eq i32 %s.next, 0
  br i1 %done, label %out, label %step
out:
  %first = icmp eq i32 %t, 0
  br i1 %first, label %publish, label %end
publish:
  %total = load {T}, ptr %buf, align {A}
  %old = atomicrmw fadd ptr %dst, {T} %total monotonic, align {A}
  br label %end
end:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  ret void
}}
"""

TEMPLATES = {"nvptx": NVPTX}


def ensure(module, target: str, t: T.Type) -> str:
    """Add the block sum of `target` for float type t to the module once; return its name."""
    name = f"enzpy.block_sum.{target}.{t.suffix}"
    if name in module.functions:
        return name
    text = TEMPLATES[target].format(S=t.suffix, T=t, A=T.size_of(t))
    merge(module, text)
    return name
