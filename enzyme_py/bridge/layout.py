"""Where each Numba argument lives among a function's LLVM parameters.

Each Numba argument flattens to one or more LLVM parameters (an N-D array to 5 + 2N: meminfo,
parent, nitems, itemsize, data, shape..., strides...; tuples recursively). The layout is read off
a target's data models, not guessed. Target-neutral: the CPU calling convention (convention.py)
passes its target context and the index of the first argument's parameter; another target
passes its own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from numba.core import types
from numba.core.datamodel.packer import _flatten

from ir_passes import FLOAT32, FLOAT64, Extent


SHADOWED = (types.Array, types.ListType, types.DictType)   # the arguments that can have a shadow


@dataclass(frozen=True)
class ArgLayout:
    """Where one Numba argument lives among the LLVM parameters.

    `params`: its LLVM parameter indices, in order. `data`: the index of its
    data pointer when it is an array (of the container's pointer for a typed List or Dict), else
    None.
    """
    params: tuple
    data: Optional[int] = None


def width(llvm_arg_type) -> int:
    """How many LLVM parameters an argument of this LLVM type flattens to."""
    return len(list(_flatten([llvm_arg_type])))


def field_offset(dm, name: str, index: int) -> int:
    """The parameter index of field `name` of data model `dm` whose first parameter is `index`."""
    pos = dm.get_field_position(name)
    return index + sum(width(m.get_argument_type()) for m in dm.inner_models()[:pos])


def arg_layouts(argtypes, context, first: int) -> list:
    """One ArgLayout per Numba argument type, the first argument starting at parameter `first`,
    with the data models of target `context`."""
    dmm = context.data_model_manager
    layouts, index = [], first
    for ty in argtypes:
        dm = dmm.lookup(ty)
        n = width(dm.get_argument_type())
        data = field_offset(dm, "data", index) if isinstance(ty, SHADOWED) else None
        layouts.append(ArgLayout(tuple(range(index, index + n)), data))
        index += n
    return layouts


def array_extents(argtypes, context, first: int) -> dict:
    """For each array argument, where its memory extent comes from, for ir_passes:
    {data param: Extent([(shape param, stride param), ...], itemsize param)}."""
    dmm = context.data_model_manager
    out, index = {}, first
    for ty in argtypes:
        dm = dmm.lookup(ty)
        if isinstance(ty, types.Array):
            shape = field_offset(dm, "shape", index)
            strides = field_offset(dm, "strides", index)
            dims = [(shape + k, strides + k) for k in range(ty.ndim)]
            out[field_offset(dm, "data", index)] = Extent(
                dims, field_offset(dm, "itemsize", index), _float_element(ty.dtype))
        index += width(dm.get_argument_type())
    return out


def _float_element(dtype):
    """The ir_passes float type an array of `dtype` holds (a complex one: its parts'), or None."""
    if isinstance(dtype, types.Complex):
        dtype = dtype.underlying_float
    return {types.float64: FLOAT64, types.float32: FLOAT32}.get(dtype)
