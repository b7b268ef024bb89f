"""Numba's CPU calling convention, seen as a list of LLVM parameters.

A Numba function is `i32 @f(ptr %retptr, ptr %excinfo, <flattened args>)` (layout.py says where
each argument's fields are), returning a status: Numba's success codes are registered with
ir_passes in nrt.py. The layout is cross-checked against `call_conv.get_function_type`.
"""
from __future__ import annotations

from numba.core import types
from numba.core.registry import cpu_target

from ir_passes import Activity

from . import layout
from .layout import ArgLayout

RETPTR = 0
EXCINFO = 1
FIRST_ARG = 2

__all__ = ["ArgLayout", "EXCINFO", "FIRST_ARG", "RETPTR", "arg_layouts", "array_extents",
           "build_activity", "data_params", "param_count", "returns_float"]


def context():
    return cpu_target.target_context


def arg_layouts(argtypes) -> list:
    """One ArgLayout per Numba argument type, for a function with these args."""
    return layout.arg_layouts(argtypes, context(), FIRST_ARG)


def array_extents(argtypes) -> dict:
    """layout.array_extents for a CPU function with these args."""
    return layout.array_extents(argtypes, context(), FIRST_ARG)


def param_count(argtypes, restype) -> int:
    """Number of LLVM parameters of the Numba function (retptr and excinfo included)."""
    fnty = context().call_conv.get_function_type(restype, list(argtypes))
    return len(fnty.args)


def returns_float(restype) -> bool:
    """Whether the return value is a real float, differentiated through %retptr."""
    return isinstance(restype, types.Float)


def build_activity(argtypes, restype, kinds) -> list:
    """The `activity` list for `ir_passes.reverse_mode` (Activity members).

    `kinds[i]` is the Activity (or its string) of Numba argument i: CONST, DUP (an array with a
    shadow) or ACTIVE (a float scalar). %retptr is DUP when the kernel returns a float (its
    shadow holds the seed); every other parameter is CONST.
    """
    if len(kinds) != len(argtypes):
        raise ValueError("one kind per argument expected")
    activity = [Activity.CONST] * param_count(argtypes, restype)
    layouts = arg_layouts(argtypes)
    if FIRST_ARG + sum(len(lay.params) for lay in layouts) != len(activity):
        raise AssertionError("arg layouts disagree with Numba's function type")
    if returns_float(restype):
        activity[RETPTR] = Activity.DUP
    for ty, kind, lay in zip(argtypes, kinds, layouts):
        try:
            kind = Activity(kind)
        except ValueError:
            raise ValueError(f"unknown activity kind {kind!r}") from None
        if kind is Activity.DUP:
            if lay.data is None:
                raise TypeError(f"only arrays can be Duplicated, not {ty}")
            activity[lay.data] = Activity.DUP
        elif kind is Activity.ACTIVE:
            if len(lay.params) != 1 or not isinstance(ty, types.Float):
                raise TypeError(f"only float scalars can be Active, not {ty}")
            activity[lay.params[0]] = Activity.ACTIVE
    return activity


def data_params(argtypes, positions) -> tuple:
    """The parameter index of the data pointer of each array argument at `positions`."""
    layouts = arg_layouts(argtypes)
    return tuple(layouts[i].data for i in positions)
