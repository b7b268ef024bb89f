"""Capture a numba-cuda kernel's NVVM IR for a signature and compute capability, without a GPU.

numba-cuda types and lowers the kernel (`_compile_pyfunc_with_fixup`, the path of `compile_ptx`)
into a code library of llvmlite.ir modules, the kernel's and its device functions', before any
optimisation. Their texts are linked into one module. Device functions compile for the current
device's compute capability, which a machine without a GPU does not have: there, they are compiled
for the capability asked for (`_assumed_device`).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from types import SimpleNamespace

import llvmlite.binding as llvm
from numba import cuda
from numba.core.errors import NumbaError
from numba.cuda import dispatcher as cuda_dispatcher
from numba.cuda.compiler import _compile_pyfunc_with_fixup

from ..timings import stage


@dataclass(frozen=True)
class Captured:
    """The linked NVVM module of one kernel signature.

    `text`: the kernel and its device functions, verified (typed pointers upgraded to `ptr`, the
    kernel in the `ptx_kernel` calling convention). `fn_name`: the kernel's symbol. `argtypes`:
    the Numba types of the signature. `cc`: the compute capability it was lowered for."""
    text: str
    fn_name: str
    argtypes: tuple
    cc: tuple


@stage("capture")
def capture(dispatcher, argtypes, cc) -> Captured:
    """Lower `dispatcher`'s kernel for `argtypes` and capability `cc` and link its modules.

    Raises TypeError when numba-cuda cannot compile the kernel for these types."""
    options = dispatcher.targetoptions
    if options.get("link"):
        raise NotImplementedError("kernels linked with external code (`link=`) are not supported: "
                                  "enzyme_py cannot see their IR")
    try:
        with _assumed_device(cc):
            lib, _ = _compile_pyfunc_with_fixup(
                dispatcher.py_func, tuple(argtypes), device=False, abi="numba", cc=cc,
                lineinfo=True, debug=False, fastmath=bool(options.get("fastmath")))
    except NumbaError as exc:
        raise TypeError(f"numba-cuda cannot compile {dispatcher.py_func.__name__} for "
                        f"({', '.join(map(str, argtypes))}): {exc}") from exc
    if lib._linking_files:
        raise NotImplementedError("kernels calling external code (`link=`, `declare_device`) are "
                                  "not supported: enzyme_py cannot see its IR")
    module = link([str(m) for m in lib.modules])
    return Captured(str(module), lib._entry_name, tuple(argtypes), tuple(cc))


def link(texts) -> llvm.ModuleRef:
    """One verified module from the texts of a kernel's modules."""
    main = llvm.parse_assembly(texts[0])
    for t in texts[1:]:
        main.link_in(llvm.parse_assembly(t))
    main.verify()
    return main


@contextlib.contextmanager
def _assumed_device(cc):
    """numba-cuda compiles a kernel's device functions for `get_current_device()`'s capability;
    without a driver, let that be `cc` while the kernel compiles."""
    if cuda.is_available():
        yield
        return
    saved = cuda_dispatcher.get_current_device
    cuda_dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=tuple(cc))
    try:
        yield
    finally:
        cuda_dispatcher.get_current_device = saved
