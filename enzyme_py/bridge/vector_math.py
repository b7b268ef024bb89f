"""Which vector math library the derivative rules' own math calls may use on this machine.

ir_passes/transforms/common/vector_math.py names vector variants on those calls; primal calls stay
libm's, so primal arrays are written bit for bit as a plain call writes them. Here the host side
decides: glibc's libmvec, for the instruction sets Numba's target machine compiles for, if the
library loads. `ENZYME_PY_VECTOR_MATH=0` turns it off (docs/performance.md).
"""
import ctypes
import os
import platform

import llvmlite.binding as llvm
from numba.core.registry import cpu_target

from ir_passes import libmvec

_ISA_FEATURES = {"b": "+sse4.1", "c": "+avx", "d": "+avx2", "e": "+avx512f"}
_host = []


def host_library():
    """The ir_passes VectorLibrary to pass to reverse_mode / forward_mode, or None."""
    if not _host:
        _host.append(_find())
    return _host[0]


def _find():
    if os.environ.get("ENZYME_PY_VECTOR_MATH", "1") == "0":
        return None
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None
    try:
        lib = ctypes.CDLL("libmvec.so.1")
    except OSError:
        return None
    features = set(cpu_target.target_context.codegen()._tm_features.split(","))
    isas = [isa for isa, flag in _ISA_FEATURES.items() if flag in features]
    if not isas:
        return None
    llvm.load_library_permanently("libmvec.so.1")   # the JIT resolves the variants from it
    return libmvec(isas, exported=lambda symbol: hasattr(lib, symbol))


def cache_tag() -> str:
    """What the disk cache key records of this choice."""
    lib = host_library()
    return lib.name if lib is not None else "none"
