"""The memory extent of a pointer parameter, when the caller knows it (an array's data pointer:
enzyme_py passes its shape, strides and item size as other parameters)."""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import types as T
from ...ir.values import ConstInt


@dataclass(frozen=True)
class Extent:
    """Where a pointer parameter's memory extent comes from: per dimension the parameter holding
    its length and the one holding its byte stride, and the parameter holding the item size.
    `element`: the float type the memory holds (a complex array: its parts' type), when the
    caller knows it; None for other data or when unknown."""
    dims: list
    itemsize: int
    element: T.FloatType | None = None


def extent_bounds(b, params, ext: Extent):
    """(offset of the first byte from the parameter's pointer, size in bytes) of the memory of
    Extent `ext` over the function parameters `params`, built with b."""
    zero = ConstInt(T.i64, 0)
    lo, hi, empty = zero, params[ext.itemsize], None
    for n_idx, s_idx in ext.dims:
        n, s = params[n_idx], params[s_idx]
        t = b.mul(b.sub(n, ConstInt(T.i64, 1)), s)
        neg = b.icmp("slt", t, zero)
        lo = b.add(lo, b.select(neg, t, zero))
        hi = b.add(hi, b.select(neg, zero, t))
        e = b.icmp("sle", n, zero)
        empty = e if empty is None else b.binop("or", empty, e)
    size = b.sub(hi, lo)
    if empty is not None:
        size = b.select(empty, zero, size)
    return lo, size
