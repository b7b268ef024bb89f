"""Errors users may catch.

`UnsupportedError` is ir_passes' error for a construct it cannot differentiate
(it names the construct, the LLVM instruction and, with debug info, the Python
file and line in `.location`). It is re-exported here so users need not import
ir_passes.
"""
try:
    from ir_passes import UnsupportedError
except ImportError:     # ir_passes not importable (yet): keep the name usable
    class UnsupportedError(Exception):
        """A construct that cannot be differentiated."""

__all__ = ["UnsupportedError"]
