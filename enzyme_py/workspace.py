"""The tape a gradient keeps between calls.

A gradient parks its tape arrays in a workspace when it returns, and the next call takes them
back, so a repeat call with the same shapes allocates no tape (ir_passes/transforms/reverse/tape/tape.py).
The memory comes from NRT_Allocate / NRT_Free (enzyme_py/bridge/nrt.py), so
`numba.core.runtime.rtsys.get_allocation_stats()` counts it. `release_tape` frees what is
parked, e.g. after the last call of a gradient with a large tape. Split mode parks the memory
of released tapes in a pool per gradient (modes/frame_pool.py): `release_split_tapes` frees it.
"""
import ctypes
from typing import Any

from .modes.split import release_tapes as release_split_tapes

__all__ = ["release_tape", "release_split_tapes"]


def release_tape(grad: Any) -> bool:
    """Free the tape that `grad` (a CompiledGradient: `enzyme_py.compile_gradient(...)`) keeps
    between calls. Returns False when its gradient keeps none. A later call starts afresh."""
    library = getattr(grad, "library", None)
    if library is None or grad.spec is None:
        return False
    address = library.get_pointer_to_function(grad.spec.name + ".release")
    if not address:
        return False
    ctypes.CFUNCTYPE(None)(address)()
    return True
