"""ir_passes: a small compiler from LLVM IR to LLVM IR that synthesizes derivatives.

It knows nothing about Numba or NumPy: it reads LLVM assembly, analyses it, and adds
gradient functions. See docs/internals.md for the interface.
"""
from .errors import UnsupportedError
from .ir.parser import parse_module
from .ir.printer import print_module
from .rules.allocators import register_allocator
from .rules.blas import register_dot
from .rules.registry import external as register_external
from .rules.registry import inactive as register_inactive
from .transforms.heap import LIBC as LIBC_HEAP
from .transforms.heap import Heap, register_heap
from .transforms.restore import Extent
from .transforms.vector_math import VectorLibrary, libmvec


def reverse_mode(module, fn_name, activity, out_name, **options):
    """Add the reverse-mode gradient of `fn_name` to `module` as `out_name` (docs/internals.md)."""
    from .transforms.reverse import reverse_mode as run
    return run(module, fn_name, activity, out_name, **options)


def forward_mode(module, fn_name, activity, out_name, width=1, **options):
    """Add the forward-mode tangent function of `fn_name` to `module` as `out_name`
    (transforms/forward.py; `width` tangents per value, 1 to 16)."""
    from .transforms.forward import forward_mode as run
    return run(module, fn_name, activity, out_name, width=width, **options)


__all__ = ["Extent", "Heap", "LIBC_HEAP", "register_heap", "UnsupportedError", "parse_module", "print_module", "register_allocator", "register_dot", "register_external", "register_inactive",
           "reverse_mode", "forward_mode"]
