"""ir_passes' shareable runtime helpers (ir_passes/runtime/shared.py: the matrix loops, the
triangular solves, the norms' adjoints, ...), compiled once per process.

Every mode asks ir_passes for `runtime="declare"`: a generated module only declares those
helpers, and `ensure` compiles the ones not yet compiled in this process (one O3 run, with
Numba's codegen) before the gradient's library is finalized, so its calls resolve by symbol in
Numba's JIT engine, as an entry's call of its gradient does. A gradient loaded from the disk
cache names the helpers it calls; disk_cache.py loads their object code (or compiles and stores
it) before the gradient's own (docs/caching.md)."""
from __future__ import annotations

import threading

import llvmlite.binding as llvm
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target

from ir_passes import runtime_library_text

from ..timings import stage
from .library import library_class

_lock = threading.RLock()
_libraries: dict = {}      # helper name -> the code library defining it (kept for the process)
_batches: dict = {}        # sorted names -> the library compiled for exactly them


def missing(names) -> list:
    """The helpers of `names` not yet compiled in this process, sorted."""
    return sorted(set(names) - _libraries.keys())


def add(names, library) -> None:
    """Record `library` (finalized, in Numba's JIT engine) as the definition of `names`."""
    with _lock:
        for name in names:
            _libraries.setdefault(name, library)


@stage("runtime")
def compile_helpers(names):
    """A finalized code library defining the helpers `names` (external symbols)."""
    codegen = cpu_target.target_context.codegen()
    with global_compiler_lock:
        library = library_class(codegen)(codegen, "enzyme_py.runtime")
        library.enable_object_caching()     # disk_cache stores its object code
        library.add_llvm_module(llvm.parse_assembly(runtime_library_text(names)))
        library.finalize()
    return library


def ensure(names):
    """Compile the helpers of `names` this process lacks; returns the new library or None."""
    with _lock:
        todo = missing(names)
        if not todo:
            return None
        library = compile_helpers(todo)
        add(todo, library)
        _batches[tuple(todo)] = library
        return library


def compiled_for(names):
    """The library compiled in this process for exactly the sorted `names`, or None."""
    return _batches.get(tuple(names))
