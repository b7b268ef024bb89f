"""Numba's CPU calling convention, seen as a list of LLVM parameters.

A Numba function is `i32 @f(ptr %retptr, ptr %excinfo, <flattened args>)`. Each
Numba argument flattens to one or more LLVM parameters (an N-D array to
5 + 2N: meminfo, parent, nitems, itemsize, data, shape..., strides...; tuples
recursively). The layout is read off Numba's data models and arg packer, not
guessed, and cross-checked against `call_conv.get_function_type`.
"""
from dataclasses import dataclass
from typing import Optional

from numba.core import types
from numba.core.datamodel.packer import _flatten
from numba.core.registry import cpu_target

RETPTR = 0
EXCINFO = 1
FIRST_ARG = 2


@dataclass(frozen=True)
class ArgLayout:
    """Where one Numba argument lives among the LLVM parameters.

    `params`: its LLVM parameter indices, in order. `data`: the index of its
    data pointer when it is an array, else None.
    """
    params: tuple
    data: Optional[int] = None


def _context():
    return cpu_target.target_context


def _width(llvm_arg_type) -> int:
    return len(list(_flatten([llvm_arg_type])))


def arg_layouts(argtypes) -> list:
    """One ArgLayout per Numba argument type, for a function with these args."""
    dmm = _context().data_model_manager
    layouts, index = [], FIRST_ARG
    for ty in argtypes:
        dm = dmm.lookup(ty)
        width = _width(dm.get_argument_type())
        data = None
        if isinstance(ty, types.Array):
            pos = dm.get_field_position("data")
            data = index + sum(_width(m.get_argument_type())
                               for m in dm.inner_models()[:pos])
        layouts.append(ArgLayout(tuple(range(index, index + width)), data))
        index += width
    return layouts


def param_count(argtypes, restype) -> int:
    """Number of LLVM parameters of the Numba function (retptr and excinfo included)."""
    fnty = _context().call_conv.get_function_type(restype, list(argtypes))
    return len(fnty.args)


def returns_float(restype) -> bool:
    """Whether the return value is a real float, differentiated through %retptr."""
    return isinstance(restype, types.Float)


def build_activity(argtypes, restype, kinds) -> list:
    """The `activity` list for `ir_passes.reverse_mode`.

    `kinds[i]` is "const", "dup" (an array with a shadow) or "active" (a float
    scalar) for Numba argument i. %retptr is "dup" when the kernel returns a
    float (its shadow holds the seed); every other parameter is "const".
    """
    if len(kinds) != len(argtypes):
        raise ValueError("one kind per argument expected")
    activity = ["const"] * param_count(argtypes, restype)
    layouts = arg_layouts(argtypes)
    if FIRST_ARG + sum(len(l.params) for l in layouts) != len(activity):
        raise AssertionError("arg layouts disagree with Numba's function type")
    if returns_float(restype):
        activity[RETPTR] = "dup"
    for ty, kind, layout in zip(argtypes, kinds, layouts):
        if kind == "dup":
            if layout.data is None:
                raise TypeError(f"only arrays can be Duplicated, not {ty}")
            activity[layout.data] = "dup"
        elif kind == "active":
            if len(layout.params) != 1 or not isinstance(ty, types.Float):
                raise TypeError(f"only float scalars can be Active, not {ty}")
            activity[layout.params[0]] = "active"
        elif kind != "const":
            raise ValueError(f"unknown activity kind {kind!r}")
    return activity


def data_params(argtypes, positions) -> tuple:
    """The parameter index of the data pointer of each array argument at `positions`."""
    layouts = arg_layouts(argtypes)
    return tuple(layouts[i].data for i in positions)


def _field_offset(dm, name, index) -> int:
    pos = dm.get_field_position(name)
    return index + sum(_width(m.get_argument_type()) for m in dm.inner_models()[:pos])


def array_extents(argtypes) -> dict:
    """For each array argument, where its memory extent comes from, for ir_passes:
    {data param: Extent([(shape param, stride param), ...], itemsize param)}."""
    from ir_passes import Extent
    dmm = _context().data_model_manager
    out, index = {}, FIRST_ARG
    for ty in argtypes:
        dm = dmm.lookup(ty)
        if isinstance(ty, types.Array):
            shape = _field_offset(dm, "shape", index)
            strides = _field_offset(dm, "strides", index)
            dims = [(shape + k, strides + k) for k in range(ty.ndim)]
            out[_field_offset(dm, "data", index)] = Extent(dims, _field_offset(dm, "itemsize", index))
        index += _width(dm.get_argument_type())
    return out
