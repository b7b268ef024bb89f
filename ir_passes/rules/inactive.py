"""Functions that never carry derivatives. See registry.py."""
from .registry import inactive

for name in ("llvm.lifetime.start", "llvm.lifetime.end", "llvm.assume", "llvm.dbg.value",
             "llvm.dbg.declare", "llvm.experimental.noalias.scope.decl", "llvm.invariant.start",
             "llvm.invariant.end", "NRT_incref", "NRT_decref"):
    inactive(name)
