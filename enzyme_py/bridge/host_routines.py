"""SciPy's BLAS and LAPACK routines (the library Numba's own linear algebra calls) as the symbols
`enzpy.host.<d|s|z|c><routine>` that ir_passes/runtime/fortran.py's helpers call: the triangular
solve and the LU solve the matrix-level adjoints need. The addresses come from
scipy.linalg.cython_blas / cython_lapack's C API capsules and are added to LLVM's symbol table."""
from __future__ import annotations

import ctypes

from llvmlite import binding as llvm

# routine -> the SciPy module that exports it
ROUTINES = {"trsm": "cython_blas", "getrs": "cython_lapack"}


def _address(capsule) -> int:
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return pointer(capsule, name(capsule))


def define() -> list:
    """Adds the symbols of every routine SciPy exports; returns the routines defined (none
    without SciPy: the records that need them then refuse with a message)."""
    try:
        import scipy.linalg.cython_blas as blas
        import scipy.linalg.cython_lapack as lapack
    except ImportError:
        return []
    modules = {"cython_blas": blas, "cython_lapack": lapack}
    done = []
    for routine, module in ROUTINES.items():
        capi = modules[module].__pyx_capi__
        for prefix in "dszc":
            llvm.add_symbol(f"enzpy.host.{prefix}{routine}", _address(capi[prefix + routine]))
        done.append(routine)
    return done
