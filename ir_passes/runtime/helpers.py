"""Helper functions the generated code calls, written in LLVM IR and added on demand.

Those that allocate are written for libc (malloc / realloc / free); heap.rewrite retargets them
to the module's heap. A `%oldbytes` beside each realloc is for heaps without one."""
from __future__ import annotations

from ..ir.parser import parse_module
from .heap import rewrite
from .source import load

FLOATS = (("f64", "double", 8), ("f32", "float", 4))

# helper name -> the module text defining it (runtime/<file>.ll, a template filled per name)
HELPERS = {}


def add_file(names, file: str, uses=(), **values) -> None:
    """Register runtime file `file` (filled with `values`), followed by the files `uses` that
    it calls, as the text of each of `names`."""
    text = load(file, **values) + "".join(load(u) for u in uses)
    for name in ([names] if isinstance(names, str) else names):
        HELPERS[name] = text


add_file(("enzpy.push_allocation", "enzpy.free_allocations"), "allocation_list", uses=("growable_list",))
add_file("enzpy.digamma", "digamma")
for _s, _t, _w in FLOATS:
    add_file(f"enzpy.copy_adjoint.{_s}", "copy_adjoint", SUFFIX=_s, WIDTH=_w, TYPE=_t)
    add_file(f"enzpy.dot_adjoint.{_s}", "dot_adjoint", SUFFIX=_s, TYPE=_t)
    add_file(f"enzpy.parfor.sum.{_s}", "parfor_sum", SUFFIX=_s, TYPE=_t)
add_file("enzpy.parfor.iterations", "parfor_iterations")
add_file(("enzpy.take", "enzpy.park", "enzpy.release"), "workspace")
add_file(("enzpy.push_child", "enzpy.free_children", "enzpy.drop_children"), "children",
         uses=("growable_list",))
add_file("enzpy.buffer", "buffer")


def release_objects(module, free: str) -> str:
    """The name of the helper releasing a list of objects with `free`, added to the module."""
    name = f"enzpy.release_objects.{free}"
    if name not in HELPERS:
        add_file(name, "object_list", RELEASE=free)
    ensure(module, name)
    return name


def register_helper(names, text: str) -> None:
    """A host's runtime helper: `text` (LLVM IR defining each of `names`) is merged into a module
    that calls one of them."""
    for name in ([names] if isinstance(names, str) else names):
        HELPERS[name] = text


def merge(module, text: str) -> None:
    """Add what module text `text` defines and declares (functions, globals) to `module`, each
    once: the runtime's helpers with globals of their own (block_sum.py, warp_add.py)."""
    helper = parse_module(text)
    for item in helper.items:
        if isinstance(item, str):
            if item.strip() and item not in module.items:
                module.items.append(item)
        elif item.name not in module.functions:
            module.add_function(item)


def ensure(module, name: str) -> None:
    """Add helper `name` (and what it declares: functions, external globals) to the module
    once."""
    if name in module.functions:
        return
    helper = parse_module(rewrite(module, HELPERS[name]))
    for item in helper.items:
        if isinstance(item, str) and " = external global " in item and item not in module.items:
            module.items.append(item)
    for fn in helper.functions.values():
        if fn.name not in module.functions:
            module.add_function(fn)


def keep_repeated_loops_apart(module) -> None:
    """Mark `noinline` every runtime helper (`enzpy.*`) that loops and is called from two places
    or more. Inlined at each call site, its loops were optimized, vectorized and compiled again
    per site: a Kalman filter's gradient inlined eleven guarded gemms and their tests, half of its
    O3 + codegen time. A loop over a matrix gains little from its caller's constants; a helper
    called once still inlines."""
    calls: dict = {}
    for fn in module.functions.values():
        for inst in fn.instructions() if not fn.is_declaration else ():
            if inst.opcode == "call" and inst.callee_name.startswith("enzpy."):
                calls[inst.callee_name] = calls.get(inst.callee_name, 0) + 1
    for name, n in calls.items():
        fn = module.functions.get(name)
        if n >= 2 and fn is not None and not fn.is_declaration and loops(fn) and \
                not any(a.endswith("inline") for a in fn.suffix.split()):
            fn.suffix = f"noinline {fn.suffix}".strip()


def loops(fn) -> bool:
    """Does a branch of `fn` go back to its own or an earlier block (a loop, in helpers written
    in order)?"""
    order = {blk: k for k, blk in enumerate(fn.blocks)}
    return any(order.get(t, len(order)) <= k for blk, k in order.items() for t in blk.successors())
