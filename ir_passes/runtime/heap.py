"""Where a gradient's own memory comes from: tape arrays, the workspace, the allocation and
children lists, split frames, shadows of temporaries, copies.

By default the C library's malloc / realloc / free, called directly. `register_heap(allocate,
free, realloc=None)` names other functions (`ptr allocate(i64)`, `void free(ptr)`, and optionally
`ptr realloc(ptr, i64)`), for every later `reverse_mode` (or per call: its `heap=` option). A
runtime that counts its allocations can then show what a gradient allocates. Without a realloc,
growth is allocate + memcpy + free (every call site knows the old size), and frees skip null
(a counting allocator would otherwise count frees of nothing).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ir.parser import parse_module
from .source import load


@dataclass(frozen=True)
class Heap:
    allocate: str = "malloc"
    free: str = "free"
    realloc: str | None = "realloc"

    @property
    def is_libc(self) -> bool:
        return self == LIBC


LIBC = Heap()
_registered = [LIBC]


def register_heap(allocate: str = "malloc", free: str = "free", realloc: str | None = None) -> Heap:
    """Make (allocate, free, realloc) the heap of later gradients; returns the previous one."""
    old = _registered[0]
    _registered[0] = LIBC if (allocate, free, realloc) == ("malloc", "free", "realloc") else \
        Heap(allocate, free, realloc)
    return old


def registered() -> Heap:
    return _registered[0]


def of(module) -> Heap:
    """The heap of the code generated into `module` (module.heap; libc when it names none)."""
    return module.heap if module.heap is not None else LIBC


def allocate(b, size):
    return b.call(of(b.module).allocate, T.ptr, [size])


def free(b, ptr) -> None:
    h = of(b.module)
    if h.is_libc:
        b.call("free", T.void, [ptr])
        return
    _ensure(b.module, "enzpy.heap.free")
    b.call("enzpy.heap.free", T.void, [ptr])


def reallocate(b, ptr, size, old_size):
    """`ptr` (null, or `old_size()` bytes) grown to `size` bytes; `old_size` builds that count."""
    h = of(b.module)
    if h.realloc is not None:
        return b.call(h.realloc, T.ptr, [ptr, size])
    _ensure(b.module, "enzpy.heap.realloc")
    return b.call("enzpy.heap.realloc", T.ptr, [ptr, old_size(), size])


def _ensure(module, name: str) -> None:
    if name in module.functions:
        return
    h = of(module)
    for fn in parse_module(load("heap", ALLOCATE=h.allocate, FREE=h.free)).functions.values():
        if fn.name not in module.functions:
            module.add_function(fn)


def rewrite(module, text: str) -> str:
    """A runtime helper's text (written for libc) for the module's heap."""
    h = of(module)
    if h.is_libc:
        return text
    realloc = ("@enzpy.heap.realloc(ptr %old, i64 %oldbytes, i64 %bytes)" if h.realloc is None
               else f"@{h.realloc}(ptr %old, i64 %bytes)")
    text = text.replace("@realloc(ptr %old, i64 %bytes)", realloc)
    text = text.replace("call void @free(", "call void @enzpy.heap.free(")
    text = text.replace("call ptr @malloc(", f"call ptr @{h.allocate}(")
    for decl in ("declare ptr @realloc(ptr, i64)\n", "declare void @free(ptr)\n",
                 "declare ptr @malloc(i64)\n"):
        text = text.replace(decl, "")
    text += f"declare ptr @{h.allocate}(i64)\n"
    if h.realloc is not None:
        text += f"declare ptr @{h.realloc}(ptr, i64)\n"
    for name in ("enzpy.heap.free", "enzpy.heap.realloc"):
        if "@" + name + "(" in text:
            _ensure(module, name)
    return text
