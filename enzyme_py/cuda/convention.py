"""numba-cuda's kernel calling convention, seen as a list of LLVM parameters.

A kernel is `void @k(<flattened args>)`: no return pointer, no exception pointer, so the first
argument starts at parameter 0. Arguments flatten as on the CPU (bridge/layout.py, read off
numba-cuda's data models): an N-D array to 5 + 2N parameters (meminfo, parent, nitems, itemsize,
data, shape..., strides...).
"""
from __future__ import annotations

from numba.core import types
from numba.cuda.descriptor import cuda_target

from ir_passes import Activity

from ..bridge import layout

FIRST = 0


def _context():
    return cuda_target.target_context


def arg_layouts(argtypes) -> list:
    """One bridge.layout.ArgLayout per argument."""
    return layout.arg_layouts(argtypes, _context(), FIRST)


def array_extents(argtypes) -> dict:
    """{data param: ir_passes.Extent} for each array argument."""
    return layout.array_extents(argtypes, _context(), FIRST)


def row_lengths(argtypes) -> dict:
    """{data param: shape[1] param} of each C-contiguous 2-D array: its rows' length."""
    dmm, out = _context().data_model_manager, {}
    for ty, lay in zip(argtypes, arg_layouts(argtypes)):
        if isinstance(ty, types.Array) and ty.ndim == 2 and ty.layout == "C":
            out[lay.data] = layout.field_offset(dmm.lookup(ty), "shape", lay.params[0]) + 1
    return out


def float32_arrays(argtypes) -> frozenset:
    """The data params of the float32 arrays."""
    return frozenset(lay.data for ty, lay in zip(argtypes, arg_layouts(argtypes))
                     if isinstance(ty, types.Array) and ty.dtype == types.float32)


def build_activity(argtypes, kinds) -> list:
    """An Activity per LLVM parameter of the kernel."""
    layouts = arg_layouts(argtypes)
    activity = [Activity.CONST] * sum(len(lay.params) for lay in layouts)
    for ty, kind, lay in zip(argtypes, kinds, layouts):
        if kind == Activity.DUP:
            activity[lay.data] = Activity.DUP
        elif kind == Activity.ACTIVE:
            if len(lay.params) != 1 or not isinstance(ty, types.Float):
                raise TypeError(f"only float scalars can be Active, not {ty}")
            activity[lay.params[0]] = Activity.ACTIVE
    return activity
