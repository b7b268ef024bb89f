"""numba-cuda's kernel calling convention, seen as a list of LLVM parameters.

A kernel is `void @k(<flattened args>)`: no return pointer, no exception pointer. Arguments
flatten as on the CPU (an N-D array to 5 + 2N parameters: meminfo, parent, nitems, itemsize,
data, shape..., strides...), read off numba-cuda's data models.
"""
from __future__ import annotations

from dataclasses import dataclass

from numba.core import types
from numba.core.datamodel.packer import _flatten
from numba.cuda.descriptor import cuda_target

from ir_passes import Extent


@dataclass(frozen=True)
class ArgLayout:
    """Where one argument lives: its LLVM parameter indices, and its data pointer's (arrays)."""
    params: tuple
    data: int | None = None
    shape: int | None = None      # first shape parameter (arrays)
    strides: int | None = None    # first stride parameter (arrays)
    itemsize: int | None = None


def _models():
    return cuda_target.target_context.data_model_manager


def _width(llty) -> int:
    return len(list(_flatten([llty])))


def arg_layouts(argtypes) -> list:
    dmm, out, index = _models(), [], 0
    for ty in argtypes:
        dm = dmm.lookup(ty)
        width = _width(dm.get_argument_type())
        fields = {}
        if isinstance(ty, types.Array):
            for name in ("data", "shape", "strides", "itemsize"):
                pos = dm.get_field_position(name)
                fields[name] = index + sum(_width(m.get_argument_type())
                                           for m in dm.inner_models()[:pos])
        out.append(ArgLayout(tuple(range(index, index + width)), **fields))
        index += width
    return out


def build_activity(argtypes, kinds) -> list:
    """One of "const", "dup", "active" per LLVM parameter of the kernel."""
    layouts = arg_layouts(argtypes)
    activity = ["const"] * sum(len(layout.params) for layout in layouts)
    for ty, kind, layout in zip(argtypes, kinds, layouts):
        if kind == "dup":
            activity[layout.data] = "dup"
        elif kind == "active":
            if len(layout.params) != 1 or not isinstance(ty, types.Float):
                raise TypeError(f"only float scalars can be Active, not {ty}")
            activity[layout.params[0]] = "active"
    return activity


def array_extents(argtypes) -> dict:
    """{data param: ir_passes.Extent} for each array argument."""
    out = {}
    for ty, lay in zip(argtypes, arg_layouts(argtypes)):
        if isinstance(ty, types.Array):
            dims = [(lay.shape + k, lay.strides + k) for k in range(ty.ndim)]
            out[lay.data] = Extent(dims, lay.itemsize)
    return out
