"""Errors users may catch, re-exported from ir_passes so users need not import it.

`UnsupportedError`: a construct that cannot be differentiated (it names the construct, the
LLVM instruction and, with debug info, the Python file and line in `.location`).
`InternalError`: a bug of enzyme_py's differentiation, not of the user's code; its message asks
to report the kernel.
"""
from ir_passes import InternalError, UnsupportedError

__all__ = ["InternalError", "UnsupportedError"]
