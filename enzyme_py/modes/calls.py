"""Normalising a call before it is differentiated: keyword arguments, defaults, tuple arguments
and the return value.

`bind(kernel, args, kwargs)` matches the annotated arguments of a call to the kernel's Python
signature and returns a `Bound`: the flat list of annotated *leaves* (a Duplicated tuple of arrays
becomes one Duplicated leaf per array) and a `CallPlan` that depends only on the call's structure
and Numba types, so it is computed once per (kernel, call shape, types) and cached:

- the kernel's Numba return type (typing only, bridge/restype.py) and how it is seeded
  (modes/returns.py);
- whether the leaves can be passed to the kernel as they are ("direct": every parameter given,
  no tuple split), possibly reordered from keyword order; otherwise a generated @njit *wrapper*
  takes the leaves as its parameters and calls the kernel exactly as the user did: positional
  arguments positional, keyword arguments by keyword, defaults left out (Numba then fills them
  itself, as `Omitted` constants, so values are identical to a plain call), tuples rebuilt.

A wrapper may also seed a structured return (arrays, tuples): `wrapper(...)` calls the kernel,
adds `Σ seed·leaf` over the seeded float leaves and `Σ <seed, leaf>` over the seeded array leaves
into `acc[j]` (one entry per seed lane; the seeds are Const arguments, shapes checked inside:
ValueError), and returns the kernel's return value. With `acc` Duplicated and its shadow 1, the
gradient of the wrapper is the kernel's gradient with the return seeded. In forward mode the
wrapper copies each differentiable leaf into an output argument instead, whose tangent is then
the leaf's. ir_passes sees only another @njit function. Active floats (and in forward mode
differentiable arrays) are never stored into the wrapper's return slot (Const memory): the
wrapper returns nothing, or the value with those leaves masked (see `Seeding`).

jitclass instances can be passed as Const; annotating one Duplicated or Active is a TypeError
naming what to do. A typed List of float arrays can be Duplicated (its shadow a typed List of the
items' shadows), nothing else but Const. Lists annotated Duplicated or Active are a TypeError too (NumPy arrays are
needed for shadows); `helpers` converts lists it receives as plain inputs.
"""
from __future__ import annotations

import inspect
import keyword
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Optional

import numba
import numpy as np
from numba.core import types
from numba.core.errors import NumbaError

from ..annotations import (Active, BatchDuplicated, Const, Duplicated, DuplicatedNoNeed,
                           as_annotation)
from ..arguments import check_aliasing, check_annotation, is_typed_dict, is_typed_list
from ..bridge.restype import return_type
from ..bridge.frozen import register
from .returns import ARRAY, ReturnPlan, ShapeMismatch, is_complex, is_optional_float, leaf_kind
from .reverse import WRAPPED_KERNEL, WRAPPER_LABELS

_DIFF = (Duplicated, DuplicatedNoNeed, BatchDuplicated, Active)
_DIFF_TYPES = frozenset(_DIFF)
_ANNOTATIONS = frozenset(_DIFF + (Const,))


@dataclass(frozen=True)
class Slot:
    """One argument of the user's call, in call order (positional, then keywords as given).

    `label`: its parameter name ("x", "rest[1]" for a star argument). `keyword`: passed by
    keyword. `tree`: None when it is one leaf (index `first`), else its tuple structure: a tuple
    whose items are leaf indices or nested trees, with `cls` the tuple class to rebuild."""
    label: str
    keyword: bool
    first: int
    tree: Any = None
    cls: Any = tuple


@dataclass(frozen=True)
class CallPlan:
    """What a call's structure and types decide (cached per kernel)."""
    kernel: Any
    slots: tuple
    params: tuple            # one name per leaf: the wrapper's parameters
    direct: Optional[tuple]  # kernel position -> leaf index, when no wrapper is needed
    call: str                # the wrapper's call of the kernel, in `params`
    globals: tuple           # (name, value) the call needs (tuple classes)
    folded: tuple            # Numba types of the kernel's arguments (Omitted for defaults)
    returns: ReturnPlan
    identity: bool = False   # direct, and the leaves are already in the kernel's order

    @property
    def name(self) -> str:
        return self.kernel.py_func.__qualname__


class Bound:
    """A call matched to its kernel: `leaves` (annotations, in `plan.params` order)."""
    __slots__ = ("plan", "leaves")

    def __init__(self, plan: CallPlan, leaves: tuple):
        self.plan = plan
        self.leaves = leaves

    def kernel_args(self) -> list:
        """The leaves in the kernel's parameter order (direct plans only)."""
        return [self.leaves[i] for i in self.plan.direct]

    def regroup(self, flat) -> tuple:
        """Per user argument, in call order: the entry of `flat` (one per leaf) for a single
        leaf, or a tuple of the same structure as the argument (None when none is set)."""
        out = []
        for slot in self.plan.slots:
            if slot.tree is None:
                out.append(flat[slot.first])
            else:
                out.append(_rebuild(slot.tree, flat, slot.cls))
        return tuple(out)


def _rebuild(tree, flat, cls=tuple):
    items = tuple(_rebuild(t, flat, t.cls) if isinstance(t, _Sub) else flat[t] for t in tree)
    if all(i is None for i in items):
        return None
    return join_complex(*items) if cls in COMPLEX else items


# ---- complex Active scalars -----------------------------------------------------------------
# `Active(z)` for a complex z is two Active floats, z.real and z.imag; the wrapper rebuilds z
# (`__tupleN(re, im)`, one of the constructors below) and the derivatives come back joined:
# dL/dRe + i dL/dIm (docs/semantics.md, "Complex numbers"), lane by lane when batched.

@numba.njit(cache=False)
def _complex128(re, im):
    return complex(re, im)


@numba.njit(cache=False)
def _complex64(re, im):
    return np.complex64(complex(re, im))


COMPLEX = {_complex128: np.complex128, _complex64: np.complex64}


def is_complex_active(ann) -> bool:
    return type(ann) is Active and isinstance(ann.value, (complex, np.complexfloating))


def _split_complex(ann):
    """(the two Active leaves of a complex Active, its constructor)."""
    value = ann.value
    single = isinstance(value, np.complex64)
    part = np.float32 if single else float
    t = ann.tangent
    if isinstance(t, (tuple, list)):
        re_t, im_t = tuple(_part(x, "real") for x in t), tuple(_part(x, "imag") for x in t)
    else:
        re_t, im_t = _part(t, "real"), _part(t, "imag")
    parts = [Active(part(value.real), re_t), Active(part(value.imag), im_t)]
    return parts, _complex64 if single else _complex128


def _part(t, which):
    if t is None:
        return None
    if not isinstance(t, (int, float, complex, np.number)) or isinstance(t, (bool, np.bool_)):
        raise TypeError(f"the tangent of a complex Active scalar must be a number, not "
                        f"{type(t).__name__}")
    return float(getattr(complex(t), which))


def join_complex(re, im):
    """dL/dRe + i dL/dIm from the parts' derivatives (tuples of k lanes each when batched)."""
    if isinstance(re, tuple) or isinstance(im, tuple):
        width = len(re if isinstance(re, tuple) else im)
        re = re if isinstance(re, tuple) else (re,) * width
        im = im if isinstance(im, tuple) else (im,) * width
        return tuple(join_complex(a, b) for a, b in zip(re, im))
    return complex(re or 0.0, im or 0.0)


# ---- binding --------------------------------------------------------------------------------

_lock = threading.RLock()
_PLANS = "_enzyme_py_call_plans"           # dispatcher attribute: {key: CallPlan}
_signatures = weakref.WeakKeyDictionary()  # dispatcher -> inspect.Signature


def signature_of(dispatcher) -> inspect.Signature:
    sig = _signatures.get(dispatcher)
    if sig is None:
        sig = _signatures[dispatcher] = inspect.signature(dispatcher.py_func)
    return sig


def bind(dispatcher, args, kwargs) -> Bound:
    """Match annotated `args`, `kwargs` to `dispatcher`'s signature (see the module docstring).
    Raises TypeError for a call the signature does not accept, with the signature.

    The plan is looked up by the call's shape (argument count, keyword names, tuple structure,
    annotation classes) and the leaves' type keys; only a new combination binds, validates and
    types the call."""
    leaves, trees = [], []
    for raw in (*args, *kwargs.values()):
        ann = raw if type(raw) in _ANNOTATIONS else as_annotation(raw)
        if type(ann) in _DIFF_TYPES and type(ann.value) is not np.ndarray and \
                (isinstance(ann.value, tuple) or is_complex_active(ann)):
            first = len(leaves)
            try:
                tree, cls = _flatten("", ann, leaves)
            except TypeError:       # bind again, for a message naming the argument
                _new_plan(dispatcher, args, kwargs, None)
                raise
            trees.append((first, tree, cls))
        else:
            trees.append(None)
            leaves.append(ann)
    key = (len(args), tuple(kwargs), tuple(None if t is None else _tree_key(t[1]) for t in trees),
           tuple([(type(a), _type_key(a.value)) for a in leaves]))
    per_kernel = dispatcher.__dict__.get(_PLANS)
    plan = per_kernel.get(key) if per_kernel is not None else None
    if plan is None:
        plan = _new_plan(dispatcher, args, kwargs, key)
    return Bound(plan, tuple(leaves))


def _new_plan(dispatcher, args, kwargs, key) -> CallPlan:
    """Bind, validate and type a call of a new shape (see `bind`); cache its plan."""
    sig = signature_of(dispatcher)
    try:
        ba = sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{dispatcher.py_func.__qualname__}{sig}: {exc}") from None
    labels = _labels(sig, len(args), kwargs)
    trees, leaves = [], []
    for n, (label, raw) in enumerate(zip(labels, (*args, *kwargs.values()))):
        ann = as_annotation(raw)
        _refuse_unsupported(label, ann)
        first = len(leaves)
        if isinstance(ann, _DIFF) and (isinstance(ann.value, tuple) or is_complex_active(ann)):
            tree, cls = _flatten(label, ann, leaves)
            trees.append((first, tree, cls))
        else:
            leaves.append(ann)
            trees.append((first, None, tuple))
        for k in range(first, len(leaves)):      # before Numba types anything
            name = _leaf_label(label, trees[-1][1], k, trees[-1][2])
            check_annotation(f"argument {n} (`{name}`)", leaves[k])
    check_aliasing(list(leaves))
    plan = _make_plan(dispatcher, sig, ba, labels, len(args), trees, leaves)
    with _lock:
        per_kernel = dispatcher.__dict__.setdefault(_PLANS, {})
        per_kernel[key] = plan
    return plan


def leaf_labels(plan: CallPlan) -> list:
    """The user's name of each leaf: "x", "params[1]" for an item of a tuple argument."""
    labels = [None] * len(plan.params)
    for slot in plan.slots:
        if slot.tree is None:
            labels[slot.first] = slot.label
        else:
            for k in range(len(labels)):
                found = _leaf_label(slot.label, slot.tree, k, slot.cls)
                if found is not None:
                    labels[k] = found
    return labels


def _leaf_label(label, tree, k, cls=tuple) -> str:
    if tree is None:
        return label
    for i, t in enumerate(tree):
        name = f"{label}.{('real', 'imag')[i]}" if cls in COMPLEX else f"{label}[{i}]"
        if isinstance(t, tuple):
            inner = _leaf_label(name, t, k, t.cls)
            if inner is not None:
                return inner
        elif t == k:
            return name
    return None


def _labels(sig, npos, kwargs) -> list:
    params = list(sig.parameters.values())
    out = []
    for i in range(npos):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                                    params[i].POSITIONAL_OR_KEYWORD):
            out.append(params[i].name)
        else:
            star = next(p for p in params if p.kind == p.VAR_POSITIONAL)
            first = params.index(star)
            out.append(f"{star.name}[{i - first}]")
    return out + list(kwargs)


def _type_key(value):
    if type(value) is float:
        return float
    if type(value) is np.ndarray:
        f = value.flags
        return (value.dtype, value.ndim, f.c_contiguous, f.f_contiguous, f.writeable, f.aligned)
    try:
        return numba.typeof(value)
    except (ValueError, NumbaError):     # binding names the argument (a >f8 array in a memmap)
        return ("untyped", type(value))


def _tree_key(tree):
    if tree is None:
        return None
    return tuple(_tree_key(t) if isinstance(t, tuple) else "." for t in tree)


def _refuse_unsupported(label, ann) -> None:
    """jitclass instances and lists cannot carry derivatives: say what to do instead."""
    if not isinstance(ann, _DIFF):
        return
    what = type(ann).__name__
    value = ann.value
    if is_typed_list(value) or is_typed_dict(value):
        if type(ann) is not Duplicated:
            raise TypeError(f"argument `{label}`: {what} on a typed List or Dict: a typed List or "
                            f"Dict of float arrays is differentiated as Duplicated(c, shadow_c), "
                            f"the shadow a container of the items' shadows")
        return
    if getattr(type(value), "_numba_type_", None) is not None or \
            type(type(value)).__name__ == "JitClassType":
        raise TypeError(
            f"argument `{label}`: {what} on a jitclass instance ({type(value).__name__}): "
            f"enzyme_py differentiates float scalars, float arrays and tuples of them. Pass the "
            f"instance as Const (it then carries no derivative), and the arrays or floats to "
            f"differentiate as separate arguments: Duplicated(obj_array, shadow) or a tuple "
            f"Duplicated((a, b), (da, db)); rebuild the instance inside the kernel if needed")
    if isinstance(value, list):
        fix = ("np.asarray(x, dtype=np.float64) (and a NumPy shadow)" if what != "Active"
               else "a NumPy array with Duplicated(np.asarray(x), shadow)")
        raise TypeError(f"argument `{label}`: {what} on a list: a list would be copied into "
                        f"Numba's memory and its derivative lost; pass {fix}")


def _flatten(label, ann, leaves):
    """Split a differentiated tuple argument into leaves appended to `leaves`; return its tree
    (leaf indices) and tuple class."""
    value = ann.value
    cls = type(value) if hasattr(type(value), "_fields") else tuple
    if is_complex_active(ann):
        parts, cls = _split_complex(ann)
    elif isinstance(ann, Active):
        extras = _match(label, value, ann.tangent, "tangent")
        parts = [Active(v, t) if isinstance(v, (float, np.floating, tuple, complex,
                                                np.complexfloating)) else Const(v)
                 for v, t in zip(value, extras)]
    elif isinstance(ann, BatchDuplicated):
        lanes = [_match(label, value, lane, "shadow") for lane in ann.shadows]
        parts = [BatchDuplicated(v, tuple(l[i] for l in lanes)) if lanes and lanes[0][i] is not None
                 else Const(v) for i, v in enumerate(value)]
    else:
        shadows = _match(label, value, ann.shadow, "shadow")
        parts = [type(ann)(v, s) if s is not None else Const(v) for v, s in zip(value, shadows)]
    tree = []
    for i, part in enumerate(parts):
        if isinstance(part, _DIFF) and (isinstance(part.value, tuple) or is_complex_active(part)):
            sub, subcls = _flatten(f"{label}[{i}]", part, leaves)
            tree.append((sub, subcls))
        else:
            tree.append(len(leaves))
            leaves.append(part)
    return _as_tree(tree), cls


def _as_tree(items):
    """Nested tuple of leaf indices; a nested tuple item is (subtree, class)."""
    return tuple(_Sub(*t) if isinstance(t, tuple) else t for t in items)


class _Sub(tuple):
    """A nested tuple argument inside a tree: (subtree, tuple class)."""

    def __new__(cls, tree, tcls):
        obj = super().__new__(cls, tree)
        obj.cls = tcls
        return obj


def _match(label, value, other, what) -> tuple:
    """`other` (shadows or tangents of the tuple `value`), one per item; None for none."""
    if other is None:
        return (None,) * len(value)
    if not isinstance(other, tuple) or len(other) != len(value):
        raise TypeError(f"argument `{label}`: the value is a tuple of {len(value)}; its {what} "
                        f"must be a tuple of {len(value)} too (None for an item without one)")
    return other


# ---- the plan -------------------------------------------------------------------------------

def _make_plan(dispatcher, sig, ba, labels, npos, trees, leaves) -> CallPlan:
    params = _param_names(labels, trees, leaves)
    slots, exprs, glob = [], [], []
    for n, (label, (first, tree, cls)) in enumerate(zip(labels, trees)):
        slots.append(Slot(label, n >= npos, first, tree, cls))
        exprs.append(params[first] if tree is None else _tuple_expr(tree, cls, params, glob))
    pos_types, kw_types = [], {}
    for n, (label, (first, tree, cls)) in enumerate(zip(labels, trees)):
        ty = _typeof_slot(label, leaves, first, tree, cls)
        if n < npos:
            pos_types.append(ty)
        else:
            kw_types[label] = ty
    try:
        _, folded = dispatcher._compiler.fold_argument_types(tuple(pos_types), kw_types)
    except Exception as exc:      # noqa: BLE001 - Numba's binding error: say it plainly
        raise TypeError(f"{dispatcher.py_func.__qualname__}{sig}: {exc}") from None
    direct = _direct_order(sig, ba, labels, npos, trees, folded)
    call_args = exprs[:npos] + [f"{label}={e}" for label, e in zip(labels[npos:], exprs[npos:])]
    returns = ReturnPlan.of(return_type(dispatcher, folded))
    identity = direct is not None and direct == tuple(range(len(direct)))
    return CallPlan(dispatcher, tuple(slots), tuple(params), direct,
                    f"__kernel({', '.join(call_args)})", tuple(glob), tuple(folded), returns,
                    identity)


def _direct_order(sig, ba, labels, npos, trees, folded):
    """Kernel position -> leaf index when the leaves are the kernel's arguments, else None."""
    if any(tree is not None for _, tree, _ in trees):
        return None
    if any(isinstance(t, types.Omitted) for t in folded):
        return None
    names = list(sig.parameters)
    kinds = [p.kind for p in sig.parameters.values()]
    if any(k in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD,
                 inspect.Parameter.KEYWORD_ONLY) for k in kinds):
        return None
    where = {label: first for label, (first, _, _) in zip(labels, trees)}
    if len(where) != len(names) or set(where) != set(names):
        return None
    return tuple(where[n] for n in names)


def _param_names(labels, trees, leaves) -> list:
    names = [None] * len(leaves)
    for label, (first, tree, _) in zip(labels, trees):
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in label).strip("_") or "a"
        if tree is None:
            names[first] = base
        else:
            _name_tree(tree, base, names)
    seen, out = set(), []
    for n in names:
        n = n if n.isidentifier() and not keyword.iskeyword(n) and not n.startswith("__") \
            else "a_" + n.lstrip("_")
        while n in seen:
            n += "_"
        seen.add(n)
        out.append(n)
    return out


def _name_tree(tree, base, names):
    for i, t in enumerate(tree):
        if isinstance(t, _Sub):
            _name_tree(t, f"{base}_{i}", names)
        else:
            names[t] = f"{base}_{i}"


def _tuple_expr(tree, cls, params, glob) -> str:
    items = [_tuple_expr(t, t.cls, params, glob) if isinstance(t, _Sub) else params[t]
             for t in tree]
    if cls is tuple:
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    name = f"__tuple{len(glob)}"
    glob.append((name, cls))
    return f"{name}({', '.join(items)})"


def _typeof_slot(label, leaves, first, tree, cls):
    if tree is None:
        return typeof_value(label, leaves[first].value)
    return typeof_value(label, _value_of(tree, cls, leaves))


def _value_of(tree, cls, leaves):
    items = [_value_of(t, t.cls, leaves) if isinstance(t, _Sub) else leaves[t].value for t in tree]
    if cls in COMPLEX:
        return COMPLEX[cls](complex(*items))
    return cls(*items) if cls is not tuple else tuple(items)


def typeof_value(label, value):
    try:
        return numba.typeof(value)
    except ValueError as exc:
        raise TypeError(f"argument `{label}`: Numba cannot type a {type(value).__name__} "
                        f"({exc})") from None


# ---- wrappers -------------------------------------------------------------------------------

_wrappers = register(weakref.WeakKeyDictionary())   # kernel -> {key: wrapper dispatcher}


@dataclass(frozen=True)
class Seeding:
    """What a wrapper does with the kernel's return value.

    `mode`: None (nothing), "reverse" (the seeded leaves' `Σ seed·leaf` into `__acc[j]`, one
    entry per lane) or "forward" (each leaf of `leaves` copied into an output `__out<n>`).
    `result`: "value" (return the kernel's value), "none" (return nothing), or "masked": the
    value with its float leaves replaced by 0.0, those leaves written to `__vals` instead
    (`_masked_values`; an Optional leaf's output also marks whether it was a float); in
    forward mode its float arrays are replaced too, the outputs holding copies of all of them.
    Active floats (and, in forward mode, differentiable arrays) must not be stored into the
    return slot, which is Const memory for a non-float return."""
    mode: Optional[str] = None
    leaves: tuple = ()
    lanes: int = 1
    result: str = "value"

    def params(self) -> list:
        """The wrapper's parameters after the call's leaves."""
        if self.mode == "forward":
            return [f"__out{n}" for n in range(len(self.leaves))]
        out = [f"__seed{n}_{j}" for n in range(len(self.leaves)) for j in range(self.lanes)]
        if self.leaves:
            out.append("__acc")
        if self.result == "masked":
            out.append("__vals")
        return out

    def key(self):
        return (self.mode, tuple((l.path, str(l.type)) for l in self.leaves), self.lanes,
                self.result)


def wrapper(plan: CallPlan, seeding: Seeding = Seeding()):
    """The @njit wrapper of `plan` with `seeding` (see the module docstring)."""
    key = (plan.params, plan.call, plan.globals, seeding.key())
    per_kernel = _wrappers.get(plan.kernel)
    got = per_kernel.get(key) if per_kernel is not None else None
    if got is not None:
        return got
    with _lock:
        per_kernel = _wrappers.setdefault(plan.kernel, {})
        got = per_kernel.get(key)
        if got is None:
            got = per_kernel[key] = _make_wrapper(plan, seeding)
    return got


def _make_wrapper(plan, seeding):
    kernel = plan.kernel
    params = list(plan.params) + seeding.params()
    body = [f"__ret = {plan.call}"]
    if seeding.mode == "reverse" and seeding.leaves:
        body += _reverse_seeding(seeding.leaves, seeding.lanes)
    elif seeding.mode == "forward":
        body += _forward_outputs(seeding.leaves)
    scope = {"__kernel": kernel, "__name__": kernel.py_func.__module__,
             "__ShapeMismatch": ShapeMismatch}
    scope.update(plan.globals)
    if seeding.result == "value":
        body.append("return __ret")
    elif seeding.result == "masked":
        floats = [l for l in ReturnPlan.of(plan.returns.restype).leaves
                  if not isinstance(l.type, types.Array)]
        if seeding.mode != "forward":
            body += _masked_values(floats)
        arrays = seeding.mode == "forward"
        body.append(f"return {_masked(plan.returns.restype, (), scope, arrays)}")
    name = f"{kernel.py_func.__name__}__enzyme_py_call"
    src = f"def {name}({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body)
    exec(compile(src, f"<enzyme_py call of {kernel.py_func.__qualname__}>", "exec"), scope)
    fn = scope[name]
    fn.__qualname__ = f"{kernel.py_func.__qualname__}__enzyme_py_call"
    fn._enzyme_py_source = src
    setattr(fn, WRAPPER_LABELS, tuple(leaf_labels(plan)) + tuple(seeding.params()))
    setattr(fn, WRAPPED_KERNEL, kernel)
    options = {k: v for k, v in kernel.targetoptions.items()
               if k in ("error_model", "nogil", "fastmath")}
    return numba.njit(**options)(fn)


def _masked(ty, path, scope, arrays) -> str:
    """The return value with its float leaves (and float arrays, with `arrays`) replaced by 0.0,
    as an expression."""
    if isinstance(ty, types.BaseTuple):
        items = [_masked(t, path + (i,), scope, arrays) for i, t in enumerate(ty.types)]
        cls = getattr(ty, "instance_class", tuple)
        if cls is tuple:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        name = f"__rcls{sum(k.startswith('__rcls') for k in scope)}"
        scope[name] = cls
        return f"{name}({', '.join(items)})"
    masked = isinstance(ty, (types.Float, types.Complex)) or is_optional_float(ty) or \
        (arrays and leaf_kind(ty) == ARRAY)
    return "0.0" if masked else _leaf_expr(path)


def _masked_values(floats) -> list:
    """`__vals[n]` = the n-th float leaf; an Optional one sets `__vals[len(floats) + n]` to 1.0
    when it is a float (not None); a complex one's imaginary part goes there."""
    lines = []
    for n, leaf in enumerate(floats):
        v = _leaf_expr(leaf.path)
        if is_complex(leaf.type):
            lines += [f"__vals[{n}] = {v}.real", f"__vals[{len(floats) + n}] = {v}.imag"]
        elif is_optional_float(leaf.type):
            lines += [f"__o = {v}", "if __o is not None:", f"    __vals[{n}] = __o",
                      f"    __vals[{len(floats) + n}] = 1.0"]
        else:
            lines.append(f"__vals[{n}] = {v}")
    return lines


def unmask(value, floats):
    """Put the float leaves (`floats`: path -> value, None for an Optional leaf that was None)
    back into a masked return value."""
    def put(v, path):
        if path in floats:
            return floats[path]
        if isinstance(v, tuple):
            items = [put(x, path + (i,)) for i, x in enumerate(v)]
            return type(v)(*items) if hasattr(type(v), "_fields") else tuple(items)
        return v
    return put(value, ())


def _leaf_expr(path) -> str:
    return "__ret" + "".join(f"[{i}]" for i in path)


def _reverse_seeding(seeded, lanes) -> list:
    lines = [f"__t{j} = 0.0" for j in range(lanes)]
    for n, leaf in enumerate(seeded):
        v = _leaf_expr(leaf.path)
        if is_optional_float(leaf.type):
            lines += [f"__o = {v}", "if __o is not None:"]
            lines += [f"    __t{j} += __seed{n}_{j} * __o" for j in range(lanes)]
            continue
        if not isinstance(leaf.type, types.Array):
            lines += [f"__t{j} += {_product(f'__seed{n}_{j}', v, leaf)}" for j in range(lanes)]
            continue
        lines.append(f"__v = {v}")
        lines += _shape_checks([f"__seed{n}_{j}" for j in range(lanes)], leaf, "seed")
        idx = _loop_nest(leaf.type.ndim, lines)
        indent = "    " * leaf.type.ndim
        lines += [f"{indent}__t{j} += {_product(f'__seed{n}_{j}[{idx}]', f'__v[{idx}]', leaf)}"
                  for j in range(lanes)]
    lines += [f"__acc[{j}] = __t{j}" for j in range(lanes)]
    return lines


def _product(s, v, leaf) -> str:
    """<s, v>: s * v, or for a complex leaf Re(conj(s) v) = s.re v.re + s.im v.im."""
    if is_complex(leaf.type):
        return f"({s}.real * {v}.real + {s}.imag * {v}.imag)"
    return f"{s} * {v}"


def _forward_outputs(live) -> list:
    lines = []
    for n, leaf in enumerate(live):
        v = _leaf_expr(leaf.path)
        if is_optional_float(leaf.type):      # __out[1] = 1.0 marks a float (not None)
            lines += [f"__o = {v}", "if __o is not None:", f"    __out{n}[0] = __o",
                      f"    __out{n}[1] = 1.0"]
            continue
        if not isinstance(leaf.type, types.Array):
            lines.append(f"__out{n}[0] = {v}")
            continue
        lines.append(f"__v = {v}")
        lines += _shape_checks([f"__out{n}"], leaf, "output")
        idx = _loop_nest(leaf.type.ndim, lines)
        lines.append("    " * leaf.type.ndim + f"__out{n}[{idx}] = __v[{idx}]")
    return lines


def _shape_checks(names, leaf, what) -> list:
    message = f"autodiff: the {what} for {leaf.where()}"
    out = []
    for name in names:
        out += [f"if {name}.shape != __v.shape:",
                f"    raise __ShapeMismatch({message!r}, {name}.shape, __v.shape)"]
    return out


def _loop_nest(ndim, lines) -> str:
    if ndim == 0:
        return "()"
    for d in range(ndim):
        lines.append("    " * d + f"for __i{d} in range(__v.shape[{d}]):")
    return ", ".join(f"__i{d}" for d in range(ndim))
