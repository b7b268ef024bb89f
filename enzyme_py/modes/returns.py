"""Return values: which Numba return types take part in L, and the seeds that match them.

A kernel's return value enters L (docs/semantics.md) through its leaves: a float return is seeded
by a float (`seed=1.0`, the default), a float array by an array of its shape (L gains
<seed, returned array>), a tuple (nested tuples, named tuples) by a tuple of seeds with the same
structure. Integer, boolean and None leaves (and integer arrays) carry no derivative: their seed is
None. A seed of None anywhere means a zero seed: that leaf is left out of L; `seed=None` leaves
the whole return out.

An Optional(float) leaf (a value that is a float or None) is seeded like a float (a lone one by
1.0 by default): the seed applies when the call returns a float there and is ignored when it
returns None (and a float seed for a leaf typed None, as Numba types it when the call always
returns None there, is ignored too). Its tangent in forward mode is None when the call returned
None there.

A complex leaf (a complex scalar or array) is seeded by a complex seed s (an array of them for
an array): L gains Re(conj(s) v) = s.re v.re + s.im v.im, so s.real weights the real part and
s.imag the imaginary part. It has no default seed. Records, lists, dicts and other objects cannot
be seeded: a kernel returning one gets a TypeError unless its seed is None. A float, an array
or a tuple return is never dropped silently: an array or a tuple return needs an explicit seed.
The return type itself comes from bridge/restype.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numba.core import types

FLOAT, ARRAY, INACTIVE, UNSEEDABLE = "float", "array", "inactive", "unseedable"


class _Unset:
    """The `seed` of a call that gave none (float returns then take 1.0)."""

    def __repr__(self) -> str:
        return "1.0"


UNSET = _Unset()


class ShapeMismatch(ValueError):
    """A seed or output array whose shape differs from the returned array's, raised inside the
    generated wrapper with (what, its shape, the returned shape) and printed as a sentence."""

    def __str__(self) -> str:
        if len(self.args) != 3:
            return super().__str__()
        what, got, returned = self.args
        hint = "; pass a seed of the returned shape" if "seed" in what else ""
        return (f"{what} has shape {tuple(got)}, but the kernel returned an array of shape "
                f"{tuple(returned)}{hint}")


@dataclass(frozen=True)
class Leaf:
    """One leaf of a return value: `path` indexes nested tuples, `type` is its Numba type."""
    path: tuple
    type: Any
    kind: str

    def where(self) -> str:
        return "the return value" + "".join(f"[{i}]" for i in self.path)


def leaf_kind(ty) -> str:
    """FLOAT (a real or complex scalar), ARRAY (a real or complex float array), INACTIVE (no
    derivative) or UNSEEDABLE."""
    if isinstance(ty, (types.Float, types.Complex)) or is_optional_float(ty):
        return FLOAT
    if isinstance(ty, types.Array):
        if isinstance(ty.dtype, (types.Float, types.Complex)):
            return ARRAY
        if isinstance(ty.dtype, (types.Integer, types.Boolean)):
            return INACTIVE
        return UNSEEDABLE
    if isinstance(ty, (types.Integer, types.Boolean, types.NoneType, types.Omitted)):
        return INACTIVE
    return UNSEEDABLE


def is_complex(ty) -> bool:
    """A complex scalar or a complex array."""
    return isinstance(getattr(ty, "dtype", ty), types.Complex)


def is_optional_float(ty) -> bool:
    """Optional(float): its seed applies when the value is a float and is ignored when None."""
    return isinstance(ty, types.Optional) and isinstance(ty.type, types.Float)


def leaves(restype, path=()) -> tuple:
    """The leaves of a return type, depth first."""
    if isinstance(restype, types.BaseTuple):
        out = ()
        for i, ty in enumerate(restype.types):
            out += leaves(ty, path + (i,))
        return out
    return (Leaf(path, restype, leaf_kind(restype)),)


@dataclass(frozen=True)
class ReturnPlan:
    """How a kernel's return value is seeded.

    `kind`: "float" (seeded through the gradient's return slot), "none" (no leaf carries a
    derivative) or "structured" (arrays and tuples: seeded by a generated wrapper, calls.py).
    `leaves`: the differentiable leaves (FLOAT and ARRAY) of a structured return."""
    restype: Any
    kind: str
    leaves: tuple = ()
    unseedable: tuple = ()
    floats: tuple = ()       # the float (scalar) leaves of a structured return
    by_path: Any = None      # every leaf (differentiable or not) by its path

    def result_policy(self, with_primal, forward=False) -> str:
        """What a wrapper returns (calls.Seeding.result): a structured return holding float or
        unseedable leaves must not be stored into the return slot as it is (Const memory), nor,
        in forward mode, one holding differentiable arrays."""
        if self.kind != "structured":
            return "value"
        if not (self.floats or self.unseedable or forward):
            return "value"
        if not with_primal:
            return "none"
        if self.unseedable:
            l = self.unseedable[0]
            raise NotImplementedError(
                f"the primal value of a return holding {l.type} ({l.where()}) cannot be "
                f"returned with the derivatives: use mode=Reverse and call the kernel for it")
        return "masked"

    @classmethod
    def of(cls, restype) -> "ReturnPlan":
        if isinstance(restype, types.Float):
            return cls(restype, "float")
        all_leaves = leaves(restype)
        live = tuple(l for l in all_leaves if l.kind in (FLOAT, ARRAY))
        bad = tuple(l for l in all_leaves if l.kind == UNSEEDABLE)
        if not live and not bad:
            return cls(restype, "none")
        return cls(restype, "structured", live, bad, tuple(l for l in live if l.kind == FLOAT),
                   {l.path: l for l in all_leaves})

    def seeds(self, seed) -> tuple:
        """Per differentiable leaf, its seed (None: zero), checked against the return type.

        Raises TypeError (wrong structure, a seed for a leaf that has none) or ValueError."""
        if seed is None:
            return (None,) * len(self.leaves)
        if self.kind == "float":
            return (1.0 if seed is UNSET else as_float_seed(seed, "the return value"),)
        if self.kind == "none":
            return ()
        if seed is UNSET and is_optional_float(self.restype):
            return (1.0,)           # a lone Optional float is seeded like a float
        if seed is UNSET:
            raise TypeError(self._missing())
        if type(seed) is np.ndarray and isinstance(self.restype, types.Array):
            return (as_array_seed(seed, self.leaves[0]),)       # one array returned
        out = []
        for path, value in _walk(self.restype, seed, ()):
            leaf = self.by_path[path]
            if value is None:
                if leaf.kind in (FLOAT, ARRAY):
                    out.append((path, None))
                continue
            if isinstance(leaf.type, types.NoneType):
                as_float_seed(value, leaf.where())      # None returned: a float seed is ignored
                continue
            if leaf.kind == INACTIVE:
                raise TypeError(f"seed: {leaf.where()} is {leaf.type}, which carries no "
                                f"derivative; its seed must be None")
            if leaf.kind == UNSEEDABLE:
                raise TypeError(f"seed: {leaf.where()} is {leaf.type}, which enzyme_py cannot "
                                f"seed (float, float array and tuple returns can be); pass None "
                                f"for it")
            if leaf.kind == FLOAT and is_complex(leaf.type):
                out.append((path, as_complex_seed(value, leaf.where())))
            elif leaf.kind == FLOAT:
                out.append((path, as_float_seed(value, leaf.where())))
            else:
                out.append((path, as_array_seed(value, leaf)))
        found = dict(out)
        return tuple(found.get(l.path) for l in self.leaves)

    def _missing(self) -> str:
        if self.unseedable and not self.leaves:
            l = self.unseedable[0]
            return (f"the kernel returns {self.restype}: {l.where()} ({l.type}) cannot be seeded "
                    f"(enzyme_py differentiates float, float array and tuple returns); pass "
                    f"seed=None to leave the return value out of L")
        if isinstance(self.restype, types.Complex):
            return (f"the kernel returns {self.restype}: pass seed= a complex number s (L gains "
                    f"s.real * out.real + s.imag * out.imag), or seed=None to leave the return "
                    f"value out")
        if isinstance(self.restype, types.Array):
            return (f"the kernel returns {self.restype}: pass seed= an array of the returned "
                    f"shape (the weight of each returned element in L, dL/d(return)), or "
                    f"seed=None to leave the return value out")
        example = _example(self.restype)
        return (f"the kernel returns {self.restype}: pass seed= a tuple of the same structure, "
                f"e.g. seed={example} (a float for a float, an array of the returned shape for "
                f"an array, None for a zero seed or a leaf without derivative), or seed=None to "
                f"leave the return value out")


def _example(ty) -> str:
    if isinstance(ty, types.BaseTuple):
        inner = ", ".join(_example(t) for t in ty.types)
        return f"({inner},)" if len(ty.types) == 1 else f"({inner})"
    kind = leaf_kind(ty)
    return {FLOAT: "1.0", ARRAY: "w"}.get(kind, "None")


def _walk(ty, seed, path):
    """(path, seed) per leaf of `ty`, matching the structure of `seed`."""
    if isinstance(ty, types.BaseTuple):
        if seed is None:
            for i in range(len(ty.types)):
                yield from _walk(ty.types[i], None, path + (i,))
            return
        if not isinstance(seed, tuple) or len(seed) != len(ty.types):
            where = "the return value" + "".join(f"[{i}]" for i in path)
            got = (f"a tuple of {len(seed)}" if isinstance(seed, tuple)
                   else type(seed).__name__)
            raise TypeError(f"seed: {where} is a tuple of {len(ty.types)} ({ty}); its seed must "
                            f"be a tuple of {len(ty.types)} (None for a zero seed), not {got}")
        for i, (t, s) in enumerate(zip(ty.types, seed)):
            yield from _walk(t, s, path + (i,))
        return
    yield path, seed


def as_float_seed(value, where) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise TypeError(f"seed: {where} is a float; its seed must be a float, not "
                        f"{type(value).__name__}")
    return float(value)


def as_complex_seed(value, where) -> complex:
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, complex, np.integer, np.floating, np.complexfloating)):
        raise TypeError(f"seed: {where} is complex; its seed must be a complex number, not "
                        f"{type(value).__name__}")
    return complex(value)


def as_array_seed(value, leaf: Leaf) -> np.ndarray:
    """The seed of an array leaf: a float array of its ndim (a list is converted)."""
    if isinstance(value, list):
        value = np.asarray(value, dtype=leaf.type.dtype.name)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"seed: {leaf.where()} is {leaf.type}; its seed must be an array of the "
                        f"returned shape, not {type(value).__name__}")
    if value.dtype.kind in "iub":
        value = value.astype(leaf.type.dtype.name)
    if value.dtype.kind != "f" and not (value.dtype.kind == "c" and is_complex(leaf.type)):
        raise TypeError(f"seed: {leaf.where()} is {leaf.type}; its seed must be a float array, "
                        f"not one of dtype {value.dtype}")
    if value.ndim != leaf.type.ndim:
        raise ValueError(f"seed: {leaf.where()} is {leaf.type} ({leaf.type.ndim}-d); its seed "
                         f"has {value.ndim} dimensions (shape {value.shape})")
    return value
