"""SciPy's BLAS and LAPACK routines (the library Numba's own linear algebra calls) as the symbols
`enzpy.host.<d|s|z|c><routine>` that ir_passes/runtime/fortran.py's helpers call: the triangular
solves and the LU solve the matrix-level adjoints need. The addresses come from
scipy.linalg.cython_blas / cython_lapack's C API capsules and are added to LLVM's symbol table."""
from __future__ import annotations

import ctypes

from llvmlite import binding as llvm

# routine -> the SciPy module that exports it
ROUTINES = {"trsm": "cython_blas", "trsv": "cython_blas", "getrs": "cython_lapack"}
# the thread-count readers of the OpenBLAS builds SciPy ships or links
THREAD_READERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
                  "openblas_get_num_threads64_", "openblas_get_num_threads")
# `enzpy.host.blas_threads.<s>`: the address of the BLAS's thread-count reader, or null (a BLAS
# that is not OpenBLAS): runtime/trsm_sized.ll reads it to avoid OpenBLAS's threaded trsm
_THREADS = ctypes.c_void_p(0)


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def thread_reader(address: int) -> int:
    """The address of OpenBLAS's get_num_threads in the library holding `address` (a routine's
    code), or 0 when that library is not OpenBLAS or cannot be read. It only reads the count:
    the user's thread settings are never changed."""
    try:
        info = _DlInfo()
        if not ctypes.CDLL(None).dladdr(ctypes.c_void_p(address), ctypes.byref(info)) \
                or not info.dli_fname:
            return 0
        lib = ctypes.CDLL(info.dli_fname.decode())
    except (OSError, AttributeError):
        return 0
    for name in THREAD_READERS:
        fn = getattr(lib, name, None)
        if fn is not None:
            return ctypes.cast(fn, ctypes.c_void_p).value or 0
    return 0


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
    _THREADS.value = thread_reader(_address(blas.__pyx_capi__["dtrsm"])) or None
    for s in ("f64", "f32"):
        llvm.add_symbol(f"enzpy.host.blas_threads.{s}", ctypes.addressof(_THREADS))
    return done
