"""Finite-difference checker for `autodiff` (reverse mode).

This module is only a *checker*: it compares what `autodiff` computes with central finite
differences of the plain kernel. Nothing in enzyme_py's AD uses it.

Semantics checked (the reverse-mode contract)::

    L = sum over the memory locations of the Duplicated arrays of  shadow (as given) * final value
        + <seed, return value>   (a float, an array, or a tuple of them: each leaf with its seed)

After `autodiff`, each shadow must hold dL/d(initial value of its array) and each Active
argument's entry in the result tuple must be dL/d(that scalar). `check_gradient` computes the
same derivatives by perturbing each initial memory location (and each Active scalar) by +-h on
copies, running the plain kernel, and evaluating L.

The caller's arrays are never modified: every run, including the `autodiff` run, works on copies
that keep dtype, shape, memory order and strides (so the same Numba specialisation is used) and
keep the aliasing between arguments: the same array passed twice (one shadow), or overlapping
views of one buffer, are copied as views of one copied buffer. Each memory location then counts
once in L and is perturbed once, whichever arguments reach it.

Calls take keyword arguments and leave defaults out as `autodiff` does; tuple arguments
(Duplicated((a, b), (da, db))) are checked leaf by leaf. An array or tuple return needs a seed
of its structure; without one, check_gradient draws it from `rng` (standard normal; a fixed
generator when rng is None) after a plain call has shown the returned shapes.

Step and tolerances follow the kernel's precision, the narrowest float type among its arrays,
NumPy float scalars and return value: a float32 kernel uses float32's step and tolerance for
every argument, Active float64 scalars included.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional

import numba
import numpy as np
from numba.core import types
from numba.typed import Dict as TypedDict
from numba.typed import List as TypedList

from . import api
from .arguments import is_typed_dict, is_typed_list, span
from .annotations import Active, BatchDuplicated, Const, Duplicated, DuplicatedNoNeed, as_annotation
from .bridge.frozen import as_dispatcher
from .modes.bound import regroup_values
from .modes.calls import bind, leaf_labels
from .modes.returns import ARRAY, FLOAT, UNSET, is_complex, leaf_kind
from .options import AUTODIFF_OPTIONS, kernel_options

__all__ = ["check_gradient", "finite_difference", "GradientReport", "ArgReport",
           "default_step", "default_rtol"]

# Relative step of the central difference, per floating dtype of the arithmetic that the
# finite difference runs in. float64: rounding error ~ 1e-16/h, truncation ~ h^2 -> 1e-6 keeps
# both well below the default rtol of 1e-6 for smooth, well-scaled kernels. float32 needs a much
# larger step (eps32 ~ 1.2e-7).
_STEP = {np.dtype(np.float64): 1e-6, np.dtype(np.float32): 3e-3}
# The tightest relative tolerance that makes sense for derivatives computed in a dtype, against a
# finite difference in that dtype, and against one computed in float64 (fd_dtype=np.float64).
_RTOL_FLOOR = {np.dtype(np.float64): 0.0, np.dtype(np.float32): 1e-3}
_RTOL_FLOOR_VS_F64 = {np.dtype(np.float64): 0.0, np.dtype(np.float32): 1e-4}


def default_step(dtype) -> float:
    """Relative finite-difference step used for arithmetic in `dtype`."""
    dt = np.dtype(dtype)
    if dt in _STEP:
        return _STEP[dt]
    return float(np.finfo(dt).eps) ** (1.0 / 3.0)


def default_rtol(dtype, rtol: float = 1e-6, fd_dtype=None) -> float:
    """The relative tolerance actually applied to a derivative of `dtype` (>= `rtol`): float32
    gets at least 1e-3 against a float32 finite difference, 1e-4 against a float64 one."""
    dt = np.dtype(dtype)
    table = _RTOL_FLOOR
    if fd_dtype is not None and np.dtype(fd_dtype).itemsize > dt.itemsize:
        table = _RTOL_FLOOR_VS_F64
    floor = table.get(dt, math.sqrt(float(np.finfo(dt).eps)))
    return max(float(rtol), floor)


def _is_float_array(a) -> bool:
    """A real or complex float array (a complex element is its real and imaginary parts)."""
    return isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.inexact)


def _pairs(a) -> np.ndarray:
    """A complex array as float64 (real, imaginary) pairs along a last axis; a real one as
    float64."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return np.stack([a.real, a.imag], axis=-1).astype(np.float64)
    return np.asarray(a, np.float64)


def _is_float_scalar(v) -> bool:
    return isinstance(v, (float, np.floating)) and not isinstance(v, bool)


class _Memory:
    """Private copies of a set of arrays that keep how they share memory.

    Arrays whose byte ranges overlap form a group, copied as one buffer of elements; each array
    is a view of its group's buffer with its own offset, shape and strides (in elements), so a
    copy of the group has the same aliasing, layout and flags. `snapshot` holds the initial
    contents; `fresh()` returns new copies (optionally cast to a wider float dtype)."""

    def __init__(self, arrays):
        self.members = []          # per array: (group, element offset, shape, element strides, writeable)
        self.groups = []           # per group: its dtype
        self.snapshot = []         # per group: the initial buffer
        order = sorted(range(len(arrays)), key=lambda i: span(arrays[i])[0])
        group_of, spans = {}, []
        for i in order:
            lo, hi = span(arrays[i])
            if spans and lo < spans[-1][1] and hi > lo:
                spans[-1][1] = max(spans[-1][1], hi)
                spans[-1][2].append(i)
            else:
                spans.append([lo, hi, [i]])
        for g, (lo, hi, idx) in enumerate(spans):
            dtype = arrays[idx[0]].dtype
            if any(arrays[i].dtype != dtype for i in idx):
                raise NotImplementedError("check_gradient: arrays of different dtypes share "
                                          "memory; pass copies")
            size = max(1, -(-(hi - lo) // dtype.itemsize))
            self.groups.append(dtype)
            for i in idx:
                group_of[i] = (g, lo)
            self.snapshot.append(np.zeros(size, dtype))
        self.members = [None] * len(arrays)
        for i, a in enumerate(arrays):
            g, lo = group_of[i]
            item = a.itemsize
            start = a.ctypes.data - lo if a.size else 0
            if start % item or any(s % item for s in a.strides):
                raise TypeError("check_gradient: cannot copy an array whose strides or offset "
                                f"are not a multiple of its itemsize (strides={a.strides})")
            self.members[i] = (g, start // item, a.shape, tuple(s // item for s in a.strides),
                               bool(a.flags.writeable))
            self.view(self.snapshot[g], i, writeable=True)[...] = a

    def view(self, buf, i, writeable=None):
        g, off, shape, strides, w = self.members[i]
        item = buf.dtype.itemsize
        v = np.ndarray(shape, dtype=buf.dtype, buffer=buf, offset=off * item,
                       strides=tuple(s * item for s in strides))
        v.flags.writeable = w if writeable is None else writeable
        return v

    def fresh(self, dtype=None):
        """(the arrays, the group buffers): new copies of the snapshot; float groups narrower
        than `dtype` are cast to it, complex ones whose parts are narrower to its complex type."""
        bufs = []
        for buf in self.snapshot:
            if dtype is not None and buf.dtype.kind == "f" and buf.dtype.itemsize < dtype.itemsize:
                bufs.append(buf.astype(dtype))
            elif dtype is not None and buf.dtype.kind == "c" and \
                    buf.dtype.itemsize < 2 * dtype.itemsize:
                bufs.append(buf.astype(np.result_type(dtype, np.complex64)))
            else:
                bufs.append(buf.copy())
        return [self.view(bufs[m[0]], i) for i, m in enumerate(self.members)], bufs

    def locations(self, i) -> np.ndarray:
        """The element index in its group buffer of each element of array `i` (its shape)."""
        _, off, shape, strides, _ = self.members[i]
        loc = np.full(shape, off, dtype=np.int64)
        for d, (n, s) in enumerate(zip(shape, strides)):
            idx = np.arange(n, dtype=np.int64) * s
            loc += idx.reshape((n,) + (1,) * (len(shape) - d - 1))
        return loc


# --------------------------------------------------------------------------------------------
# The checked call: its leaves, copies and objective
# --------------------------------------------------------------------------------------------

@dataclass
class _Leaf:
    index: int             # the user argument it belongs to (call order)
    label: str             # its name ("x", "params[1]")
    path: tuple            # its place inside a tuple argument
    kind: str              # "Const", "Active", "Duplicated", "DuplicatedNoNeed"
    value: Any = None      # a scalar's value
    member: Optional[int] = None    # the memory member of its array
    shadow: Optional[int] = None    # the memory member of its shadow
    pos: int = 0           # its place among the call's leaves
    items: Optional[list] = None    # a typed List's items (a typed Dict's values): a _Leaf each
    keys: Optional[list] = None     # a typed Dict's keys, in the order of `items`
    container: Any = None           # the typed List or Dict, to make copies like it


class _Call:
    """A call to check: its leaves, the kernel's call structure (calls.Bound), the arrays'
    memory, and the return value's seeds."""

    def __init__(self, kernel, args, kwargs, rng):
        self.kernel = kernel
        self.bound = bind(as_dispatcher(kernel), args, kwargs)
        self.slot_kinds = [type(as_annotation(a)) for a in list(args) + list(kwargs.values())]
        arrays, self.leaves = [], []
        labels = leaf_labels(self.bound.plan)
        where = _leaf_places(self.bound)
        for k, ann in enumerate(self.bound.leaves):
            if isinstance(ann, BatchDuplicated):
                raise TypeError(f"check_gradient: argument `{labels[k]}` is BatchDuplicated; "
                                "check one lane at a time with Duplicated")
            index, path = where[k]
            leaf = _Leaf(index, labels[k], path, type(ann).__name__, pos=k)
            if _expanded(ann):
                leaf.items = _list_items(leaf, ann, arrays)
            elif isinstance(ann.value, np.ndarray):
                leaf.member = len(arrays)
                arrays.append(ann.value)
            else:
                leaf.value = ann.value
            if isinstance(ann, (Duplicated, DuplicatedNoNeed)) and leaf.items is None:
                if not _is_float_array(ann.value):
                    raise TypeError(f"check_gradient: argument `{labels[k]}` is {leaf.kind} "
                                    "but its value is not a float NumPy array")
                if isinstance(ann.shadow, np.ndarray):
                    leaf.shadow = len(arrays)
                    arrays.append(ann.shadow)
            if isinstance(ann, Active) and not _is_float_scalar(ann.value):
                raise TypeError(f"check_gradient: argument `{labels[k]}` is Active but its "
                                "value is not a float scalar")
            self.leaves.append(leaf)
        # the leaves checked: a typed List's items in its place
        self.checked = [i for leaf in self.leaves for i in (leaf.items or [leaf])]
        self.memory = _Memory(arrays)
        self._refuse_const_aliases()
        if rng is not None:
            gen = np.random.default_rng(rng)
            for leaf in self.checked:
                if leaf.shadow is not None:
                    s = self.memory.view(self.memory.snapshot[self.memory.members[leaf.shadow][0]],
                                         leaf.shadow, writeable=True)
                    s[...] = gen.standard_normal(s.shape)
                    if s.dtype.kind == "c":
                        s.imag = gen.standard_normal(s.shape)
        self._pairs = self._seed_pairs()

    @property
    def returns(self):
        return self.bound.plan.returns

    def _refuse_const_aliases(self):
        """A Const array sharing memory with a Duplicated one: the contract drops what flows
        through the Const reads, which no finite difference can leave out."""
        group = {}
        for leaf in self.checked:
            if leaf.member is not None and leaf.kind != "Active":
                g = self.memory.members[leaf.member][0]
                group.setdefault(g, []).append(leaf)
        for leaves in group.values():
            kinds = {l.kind for l in leaves}
            if "Const" in kinds and kinds & {"Duplicated", "DuplicatedNoNeed"}:
                c = next(l for l in leaves if l.kind == "Const")
                d = next(l for l in leaves if l.kind != "Const")
                raise ValueError(
                    f"check_gradient: `{c.label}` (Const) shares memory with `{d.label}` "
                    f"({d.kind}): derivatives through the Const argument are dropped by the "
                    f"contract, which finite differences cannot reproduce. Pass it as "
                    f"{d.kind} with the same shadow")

    def _seed_pairs(self):
        """Per memory group of Duplicated arrays: (unique element locations, their seeds as
        float64), each location once whichever arguments reach it."""
        by_group = {}
        for leaf in self.checked:
            if leaf.shadow is None or leaf.member is None:
                continue
            g = self.memory.members[leaf.member][0]
            sg = self.memory.members[leaf.shadow][0]
            locs = self.memory.locations(leaf.member).ravel()
            seeds = self.memory.snapshot[sg][self.memory.locations(leaf.shadow).ravel()]
            by_group.setdefault(g, []).append((locs, seeds))
        out = []
        for g, parts in by_group.items():
            locs = np.concatenate([p[0] for p in parts])
            seeds = np.concatenate([p[1] if p[1].dtype.kind == "c" else np.asarray(p[1], np.float64)
                                    for p in parts])
            locs, first = np.unique(locs, return_index=True)
            out.append((g, locs, seeds[first]))
        return out

    def values(self, arrays, scalars=None):
        """The value of each leaf: its array among `arrays`, else its scalar."""
        scalars = scalars or {}
        return [_rebuild(l, [arrays[i.member] for i in l.items]) if l.items is not None else
                arrays[l.member] if l.member is not None else scalars.get(k, l.value)
                for k, l in enumerate(self.leaves)]

    def split(self, per_leaf):
        """(positional, keyword) arguments of the user's call from one entry per leaf."""
        pos, kw = [], {}
        for slot in self.bound.plan.slots:
            v = per_leaf[slot.first] if slot.tree is None else \
                regroup_values(slot.tree, slot.cls, per_leaf)
            if slot.keyword:
                kw[slot.label] = v
            else:
                pos.append(v)
        return pos, kw

    def annotated(self, arrays):
        """The user's call on these arrays, annotated as given: (positional, keyword)."""
        values = self.values(arrays)
        shadows = [_rebuild(l, [arrays[i.shadow] for i in l.items]) if l.items is not None else
                   arrays[l.shadow] if l.shadow is not None else None for l in self.leaves]
        plain_v, kw_v = self.split(values)
        plain_s, kw_s = self.split(shadows)
        out, n = [], 0
        for v, s in zip(plain_v + list(kw_v.values()), plain_s + list(kw_s.values())):
            out.append(_annotate(self.slot_kinds[n], v, s))
            n += 1
        npos = len(plain_v)
        return out[:npos], dict(zip(kw_v, out[npos:]))

    def plain(self, values):
        """The kernel's return value on these leaf values."""
        pos, kw = self.split(values)
        return self.kernel(*pos, **kw)


def _expanded(ann) -> bool:
    """A typed List or Dict checked item by item: differentiated, or holding arrays only."""
    v = ann.value
    if is_typed_dict(v):
        return isinstance(ann, (Duplicated, DuplicatedNoNeed)) or \
            all(isinstance(x, np.ndarray) for x in v.values())
    return is_typed_list(v) and (isinstance(ann, (Duplicated, DuplicatedNoNeed)) or
                                 all(isinstance(x, np.ndarray) for x in v))


def _rebuild(leaf, arrays):
    """A typed List or Dict like the leaf's container, holding `arrays`."""
    if leaf.keys is None:
        return TypedList(arrays)
    ty = numba.typeof(leaf.container)
    out = TypedDict.empty(ty.key_type, ty.value_type)
    for k, a in zip(leaf.keys, arrays):
        out[k] = a
    return out


def _list_items(leaf, ann, arrays) -> list:
    """The item leaves of a typed List (or Dict: its values) argument, its arrays (and their
    shadows) appended to `arrays`."""
    if isinstance(ann, DuplicatedNoNeed):
        raise TypeError(f"check_gradient: argument `{leaf.label}` is a typed container: "
                        "DuplicatedNoNeed takes arrays only")
    leaf.container = ann.value
    if is_typed_dict(ann.value):
        leaf.keys = list(ann.value.keys())
        values = [ann.value[k] for k in leaf.keys]
        shadows = [ann.shadow[k] for k in leaf.keys] if isinstance(ann, Duplicated) else None
    else:
        values = list(ann.value)
        shadows = list(ann.shadow) if isinstance(ann, Duplicated) else None
    items = []
    for k, v in enumerate(values):
        if not isinstance(v, np.ndarray):
            raise TypeError(f"check_gradient: argument `{leaf.label}` is a typed container whose "
                            f"item {k} is not a NumPy array")
        name = leaf.keys[k] if leaf.keys is not None else k
        item = _Leaf(leaf.index, f"{leaf.label}[{name!r}]", leaf.path + (name,), leaf.kind,
                     pos=leaf.pos, member=len(arrays))
        arrays.append(v)
        if shadows is not None:
            item.shadow = len(arrays)
            arrays.append(shadows[k])
        items.append(item)
    return items


def _annotate(kind, value, shadow):
    if kind in (Duplicated, DuplicatedNoNeed):
        return kind(value, shadow)
    if kind is Active:
        return Active(value)
    return Const(value)


def _leaf_places(bound):
    """Per leaf: (its user argument's position, its path inside that argument)."""
    out = [None] * len(bound.leaves)
    for n, slot in enumerate(bound.plan.slots):
        if slot.tree is None:
            out[slot.first] = (n, ())
        else:
            _places(slot.tree, n, (), out)
    return out


def _places(tree, n, path, out):
    for i, t in enumerate(tree):
        if isinstance(t, tuple):
            _places(t, n, path + (i,), out)
        else:
            out[t] = (n, path + (i,))


def _precision(call: _Call) -> np.dtype:
    """The kernel's precision: the narrowest float dtype among its arrays, NumPy float scalars
    and return leaves (float64 when there is none)."""
    found = [np.finfo(dt).dtype for dt in call.memory.groups if dt.kind in "fc"]
    found += [np.asarray(l.value).dtype for l in call.leaves
              if isinstance(l.value, np.floating)]
    for leaf in call.returns.leaves:
        ty = leaf.type.dtype if leaf.kind == ARRAY else getattr(leaf.type, "type", leaf.type)
        found.append(np.dtype(str(ty)))
    if call.returns.kind == "float":
        found.append(np.dtype(str(call.returns.restype)))
    return min(found, key=lambda d: d.itemsize) if found else np.dtype(np.float64)


# --------------------------------------------------------------------------------------------
# Finite differences
# --------------------------------------------------------------------------------------------

class _Objective:
    """L(initial values) evaluated with the plain kernel, on copies."""

    def __init__(self, call: _Call, seed, fd_dtype):
        self.call = call
        self.seed = seed
        self.fd_dtype = np.dtype(fd_dtype) if fd_dtype is not None else None
        self.return_seeds = call.returns.seeds(seed) if call.returns.kind != "float" else ()
        self.magnitude = 0.0      # the largest sum |terms of L| met (see `noise`)
        self.precision = _precision(call)
        self.float_seed = 0.0
        if call.returns.kind == "float":
            self.float_seed = 0.0 if seed is None else (1.0 if seed is UNSET else float(seed))

    def cast(self, v):
        fd = self.fd_dtype
        if fd is not None and _is_float_scalar(v) and np.asarray(v).dtype.itemsize < fd.itemsize:
            return fd.type(v)
        return v

    def initial(self):
        """Fresh copies: (arrays, group buffers, scalars) in the finite difference's dtype."""
        arrays, bufs = self.call.memory.fresh(self.fd_dtype)
        scalars = {k: self.cast(l.value) for k, l in enumerate(self.call.leaves)
                   if l.member is None}
        return arrays, bufs, scalars

    def __call__(self, arrays, bufs, scalars) -> float:
        ret = self.call.plain(self.call.values(arrays, scalars))
        terms = []
        for g, locs, seeds in self.call._pairs:     # complex: <s, v> = s.re v.re + s.im v.im
            terms.extend((_pairs(seeds) * _pairs(bufs[g][locs])).ravel().tolist())
        terms.extend(return_terms(self.call.returns, ret, self.float_seed, self.return_seeds))
        self.magnitude = max(self.magnitude, math.fsum(abs(t) for t in terms))
        return math.fsum(terms)

    def noise(self, h_rel) -> float:
        """What rounding in the kernel and in L can make of a central difference with relative
        step `h_rel`: a few units of roundoff of sum |terms of L|, over the step. A large
        objective (an array doubled in place a dozen times) makes it dominate."""
        dt = self.fd_dtype or self.precision
        return 4.0 * float(np.finfo(dt).eps) * self.magnitude / h_rel


def return_terms(returns, ret, float_seed, seeds) -> list:
    """The terms <seed, leaf> of the return value in L."""
    if returns.kind == "float":
        return [float_seed * float(ret)] if float_seed else []
    if returns.kind == "none":
        return []
    out = []
    for leaf, s in zip(returns.leaves, seeds):
        if s is None:
            continue
        v = ret
        for i in leaf.path:
            v = v[i]
        if leaf.kind == FLOAT:
            if v is not None:       # an Optional float that is None: no term; complex: Re(conj(s) v)
                out.extend((_pairs(s) * _pairs(v)).ravel().tolist())
        else:
            v = np.asarray(v)
            if v.shape != s.shape:
                raise ValueError(f"check_gradient: the seed for {leaf.where()} has shape "
                                 f"{s.shape}, the kernel returned shape {v.shape}")
            out.extend((_pairs(s) * _pairs(v)).ravel().tolist())
    return out


def _fd_locations(obj: _Objective, g, locs, h_rel):
    """dL/d(location) for the locations `locs` of group buffer `g`; for a complex buffer
    dL/d(real part) + i dL/d(imaginary part), each by its own central difference."""
    base = obj.initial()[1][g]
    axes = (1.0, 1j) if base.dtype.kind == "c" else (1.0,)
    grad = np.zeros(len(locs), np.complex128 if len(axes) == 2 else np.float64)
    for n, u in enumerate(locs):
        for unit in axes:
            v = base[u]
            part = float(v.real if unit == 1.0 else v.imag)
            h = h_rel * max(1.0, abs(part))
            vals, steps = [], []
            for sign in (1.0, -1.0):
                arrays, bufs, scalars = obj.initial()
                bufs[g][u] = v + sign * h * unit
                stored = bufs[g][u]                  # the value actually stored (rounded)
                steps.append(float(stored.real if unit == 1.0 else stored.imag))
                vals.append(obj(arrays, bufs, scalars))
            grad[n] += unit * (vals[0] - vals[1]) / (steps[0] - steps[1])
    return grad


def _fd_scalar(obj: _Objective, k: int, h_rel) -> float:
    v0 = obj.initial()[2][k]
    dt = np.asarray(v0).dtype
    v = float(v0)
    h = h_rel * max(1.0, abs(v))
    vals, steps = [], []
    for sign in (1.0, -1.0):
        arrays, bufs, scalars = obj.initial()
        scalars[k] = dt.type(v + sign * h)
        steps.append(float(scalars[k]))
        vals.append(obj(arrays, bufs, scalars))
    return (vals[0] - vals[1]) / (steps[0] - steps[1])


def _step(call, eps, fd_dtype) -> float:
    if eps is not None:
        return eps
    dt = _precision(call)
    if fd_dtype is not None and np.dtype(fd_dtype).itemsize > dt.itemsize:
        dt = np.dtype(fd_dtype)
    return default_step(dt)


@kernel_options()
def finite_difference(kernel: Callable, *args: Any, seed: Any = UNSET, eps: Optional[float] = None,
                      fd_dtype=None, rng=None, **kwargs: Any) -> list:
    """Central finite differences of L (see the module docstring) w.r.t. each initial value.

    Returns a list with one entry per leaf (one per argument, one per item of a tuple argument,
    in call order): a float64 array (same shape as the primal) for each Duplicated /
    DuplicatedNoNeed float array, a float for each Active scalar, None otherwise.
    `eps` is the relative step (default from the kernel's precision, see `default_step`);
    `fd_dtype` (e.g. `np.float64`) runs the plain kernel on upcast copies of lower-precision
    float arrays and scalars, for a more accurate reference. The caller's arrays are not
    modified.
    """
    call = _Call(kernel, args, kwargs, rng)
    seed = _return_seed(call, seed, rng)
    return _finite_difference(_Objective(call, seed, fd_dtype), _step(call, eps, fd_dtype))


def _finite_difference(obj: _Objective, h_rel):
    call = obj.call
    by_loc = {}
    for g, locs, _ in call._pairs:
        by_loc[g] = dict(zip(locs.tolist(), _fd_locations(obj, g, locs, h_rel)))
    out = []
    for leaf in call.checked:
        if leaf.shadow is not None:
            g = call.memory.members[leaf.member][0]
            locs = call.memory.locations(leaf.member)
            table = by_loc[g]
            kind = np.complex128 if call.memory.groups[g].kind == "c" else np.float64
            out.append(np.vectorize(table.__getitem__, otypes=[kind])(locs)
                       if locs.size else np.zeros(locs.shape, kind))
        elif leaf.kind == "Active":
            out.append(_fd_scalar(obj, leaf.pos, h_rel))
        else:
            out.append(None)
    return out


def _return_seed(call: _Call, seed, rng):
    """The seed of the return value: as given, or for an array or tuple return drawn from
    `rng` in the shape of a plain call's return value."""
    returns = call.returns
    if seed is not UNSET or returns.kind != "structured":
        return seed
    gen = np.random.default_rng(0 if rng is None else rng)
    ret = call.plain(call.values(call.memory.fresh()[0]))

    def draw(ty_path, v):
        kind = leaf_kind(ty_path)
        if kind == FLOAT and is_complex(ty_path):
            return complex(gen.standard_normal(), gen.standard_normal())
        if kind == FLOAT:
            return float(gen.standard_normal())
        if kind == ARRAY and is_complex(ty_path):
            return gen.standard_normal(np.shape(v)) + 1j * gen.standard_normal(np.shape(v))
        if kind == ARRAY:
            return gen.standard_normal(np.shape(v))
        return None

    def walk(ty, v):
        if isinstance(ty, types.BaseTuple):
            return tuple(walk(t, x) for t, x in zip(ty.types, v))
        return draw(ty, v)
    return walk(returns.restype, ret)


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

@dataclass
class ArgReport:
    """Comparison for one differentiated argument (one leaf of a tuple argument)."""
    index: int
    kind: str                 # "Duplicated", "DuplicatedNoNeed" or "Active"
    ad: Any                   # what autodiff left in the shadow (float64 copy) / returned
    fd: Any                   # the finite-difference reference
    max_abs_err: float
    max_rel_err: float
    rtol: float
    atol: float
    passed: bool
    label: str = ""           # the argument's name ("x", "params[1]" inside a tuple)
    path: tuple = ()          # its place inside a tuple argument

    def worst(self, k: int = 5):
        """Up to `k` (index, ad, fd, abs err) tuples, largest error first; a complex element's
        ad and fd are complex."""
        kind = np.complex128 if np.iscomplexobj(self.ad) or np.iscomplexobj(self.fd) else np.float64
        ad = np.atleast_1d(np.asarray(self.ad, kind))
        fd = np.atleast_1d(np.asarray(self.fd, kind))
        err = np.abs(ad - fd)
        err = np.where(np.isnan(err), np.inf, err)
        order = np.argsort(-err, axis=None, kind="stable")[:k]
        rows = []
        for flat in order:
            idx = np.unravel_index(flat, ad.shape)
            rows.append((tuple(int(i) for i in idx) if np.ndim(self.ad) else (),
                         ad[idx].item(), fd[idx].item(), float(err[idx])))
        return rows


def _number(v) -> str:
    """A worst element's value: a float as ` 1.2345678901e+00`, a complex one as both parts."""
    if isinstance(v, complex):
        return f"{v.real: .10e}{v.imag:+.10e}j"
    return f"{v: .10e}"


@dataclass
class GradientReport:
    """Result of `check_gradient`. `passed` is True when every argument passed and every primal
    array ended exactly as a plain call leaves it."""
    kernel_name: str
    seed: Any
    args: List[ArgReport] = field(default_factory=list)
    primal_mismatches: List[str] = field(default_factory=list)
    ad_result: Any = None

    @property
    def passed(self) -> bool:
        return all(a.passed for a in self.args) and not self.primal_mismatches

    def __bool__(self) -> bool:
        return self.passed

    def __getitem__(self, key):
        """The report of the argument at position `key` of the call (call order), or named
        `key`; a tuple argument gives a tuple of its leaves' reports."""
        found = [a for a in self.args
                 if (a.index == key if isinstance(key, int) else
                     a.label == key or a.label.startswith(f"{key}["))]
        if not found:
            raise KeyError(f"argument {key!r} is not differentiated (Const)")
        if len(found) == 1 and (not found[0].path or found[0].label == key):
            return found[0]
        return tuple(found)

    def __str__(self) -> str:
        seed = f"{self.seed:g}" if isinstance(self.seed, float) else "<" + \
            type(self.seed).__name__ + ">"
        lines = [f"check_gradient({self.kernel_name}, seed={seed}): "
                 + ("PASSED" if self.passed else "FAILED")]
        if not self.args:
            lines.append("  (no Duplicated or Active argument)")
        else:
            lines.append(f"  {'arg':>3}  {'name':<12} {'kind':<16} {'size':>5}  {'max abs err':>11}  "
                         f"{'max rel err':>11}  {'rtol':>8}  {'atol':>8}  ok")
            for a in self.args:
                lines.append(f"  {a.index:>3}  {a.label[:12]:<12} {a.kind:<16} {np.size(a.fd):>5}  "
                             f"{a.max_abs_err:>11.3e}  {a.max_rel_err:>11.3e}  {a.rtol:>8.1e}  "
                             f"{a.atol:>8.1e}  " + ("yes" if a.passed else "NO"))
            for a in self.args:
                if not a.passed:
                    lines.append(f"  arg {a.index} ({a.label}): worst elements (index, autodiff, "
                                 f"finite diff, abs err):")
                    for idx, ad, fd, err in a.worst():
                        lines.append(f"    {idx!s:<12} {_number(ad)}  {_number(fd)}  {err:.3e}")
        for m in self.primal_mismatches:
            lines.append(f"  primal: {m}")
        return "\n".join(lines)

    __repr__ = __str__


def _compare(index, kind, ad, fd, rtol, atol, label="", path=(), noise=0.0) -> ArgReport:
    ad_a, fd_a = _pairs(ad), _pairs(fd)
    if atol is None:
        scale = float(np.max(np.abs(fd_a))) if fd_a.size else 0.0
        atol = max(rtol * max(1.0, scale), noise)
    err = np.abs(ad_a - fd_a)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(err == 0, 0.0, err / np.abs(fd_a))
    ok = bool(np.all(err <= atol + rtol * np.abs(fd_a)))  # False on NaN
    max_abs = float(np.max(err)) if err.size else 0.0
    max_rel = float(np.max(rel)) if rel.size else 0.0
    if err.size and np.isnan(err).any():
        max_abs = max_rel = float("nan")
    return ArgReport(index, kind, ad if np.ndim(ad) == 0 and not isinstance(ad, np.ndarray) else np.asarray(ad),
                     fd, max_abs, max_rel, float(rtol), float(atol), ok, label, path)


def _same_primal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


@kernel_options(also=AUTODIFF_OPTIONS)
def check_gradient(kernel: Callable, *args: Any, seed: Any = UNSET, rtol: float = 1e-6,
                   atol: Optional[float] = None, eps: Optional[float] = None, rng=None,
                   fd_dtype=None, memory: str = "tape", **kwargs: Any) -> GradientReport:
    """Check `autodiff(kernel, *args, seed=seed, **kwargs)` against central finite differences.

    Arguments are annotated as for `autodiff` (`Duplicated(x, dx)`, `Active(v)`, `Const(n)` or a
    bare value; keyword arguments, defaults left out and tuple arguments as in a call). The
    shadows as given are the weights on the final arrays in L (see the module docstring); with
    `rng` (a seed or `np.random.Generator`) the shadows are instead filled with standard-normal
    weights (on copies). `seed` weighs the return value as in `autodiff`; an array or tuple
    return without a seed gets a standard-normal one from `rng`. Arguments that share memory
    (the same array twice with one shadow, overlapping views) keep sharing it in every copy.

    Tolerance: an element passes when |ad - fd| <= atol + rtol_eff * |fd|, where rtol_eff is
    `rtol` for a float64 kernel and, for a float32 one (any float32 array, NumPy float32 scalar
    or return leaf), at least 1e-3 (1e-4 with `fd_dtype=np.float64`; see `default_rtol`), for
    every argument; `atol` defaults to rtol_eff * max(1, max |fd| over that argument), or to
    the finite difference's own rounding noise when that is larger (4 eps * sum |terms of L| /
    step: a large objective makes central differences lose digits).
    `eps` is the relative step (default from the kernel's precision: 1e-6 for float64
    arithmetic, 3e-3 for float32). `fd_dtype=np.float64` computes the reference on float64
    copies of float32 values (the same kernel compiled for float64). `memory` is autodiff's
    (the full tape, or checkpointed time loops: docs/checkpointing.md).

    Also checks that the primal arrays after `autodiff` equal those after a plain call
    (DuplicatedNoNeed primals excepted). Never modifies the caller's arrays.
    Returns a `GradientReport` (`.passed`, per-argument `report[i]` or `report["name"]`,
    readable `str()`).
    """
    call = _Call(kernel, args, kwargs, rng)
    seed = _return_seed(call, seed, rng)
    obj = _Objective(call, seed, fd_dtype)
    precision = _precision(call)

    # 1. autodiff on private copies (keeping the arguments' aliasing).
    ad_arrays, _ = call.memory.fresh()
    pos, kw = call.annotated(ad_arrays)
    ad_seed = 1.0 if seed is UNSET else seed
    # check_gradient has checked the keywords (options.py); autodiff gets its options here
    ad = getattr(api.autodiff, "__wrapped__", api.autodiff)
    result = ad(kernel, *pos, seed=ad_seed, memory=memory, **kw)

    # 2. a plain call on private copies, for the primal check.
    plain_arrays, _ = call.memory.fresh()
    call.plain(call.values(plain_arrays))

    # 3. the finite-difference reference.
    fd = _finite_difference(obj, _step(call, eps, fd_dtype))

    name = getattr(kernel, "__name__", repr(kernel))
    report = GradientReport(name, ad_seed, ad_result=result)
    r = default_rtol(precision, rtol, fd_dtype)
    noise = obj.noise(_step(call, eps, fd_dtype))
    for k, leaf in enumerate(call.checked):
        if leaf.shadow is not None:
            shadow_after = ad_arrays[leaf.shadow]
            after = np.array(shadow_after, np.complex128 if shadow_after.dtype.kind == "c"
                             else np.float64)
            report.args.append(_compare(leaf.index, leaf.kind, after,
                                        fd[k], r, atol, leaf.label, leaf.path, noise))
        elif leaf.kind == "Active":
            got = _active_result(result, leaf, len(call.bound.plan.slots))
            report.args.append(_compare(leaf.index, "Active", float(got), fd[k], r, atol,
                                        leaf.label, leaf.path, noise))
        if leaf.member is not None and leaf.kind != "DuplicatedNoNeed":
            after_ad, after_plain = ad_arrays[leaf.member], plain_arrays[leaf.member]
            if not _same_primal(after_ad, after_plain):
                diff = np.max(np.abs(_pairs(after_ad) - _pairs(after_plain)))
                report.primal_mismatches.append(
                    f"argument {leaf.index} (`{leaf.label}`) after autodiff differs from a plain "
                    f"call (max abs diff {diff:.3e})")
    return report


def _active_result(result, leaf, nslots):
    got = None
    if isinstance(result, tuple) and len(result) == nslots:
        got = result[leaf.index]
        for i in leaf.path:     # a complex Active scalar: its parts are items 0 and 1
            got = got[i] if isinstance(got, tuple) else \
                (got.real, got.imag)[i] if isinstance(got, complex) else None
    if got is None:
        raise TypeError(f"check_gradient: autodiff returned {result!r}; expected a tuple with a "
                        f"float for argument {leaf.index} (`{leaf.label}`, Active)")
    return got
