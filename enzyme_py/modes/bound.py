"""Running a bound call (calls.py) in each mode, and batches wider than 16 in chunks of 16.

`reverse(bound, seed, cache, with_primal)` differentiates the kernel itself when the call passes
its arguments as they are and nothing needs seeding beyond a float return, else the generated
wrapper (calls.wrapper) that calls the kernel as the user did and seeds an array or tuple
return. It returns the per-argument results in the user's call order, and the primal return
value when asked for. `batched(bound, seed)` is the same with k seeds per call.

`forward(bound, with_primal)`: a float return's tangent comes back as forward mode computes it
(the return slot's shadow). An array or tuple return goes through a wrapper that copies each
differentiable leaf of the return value into an output array, whose tangent is the leaf's. The
outputs need the returned shapes before the call, so the kernel first runs once on copies of
its arguments (the caller's arrays are not touched) to learn them: forward mode of an
array-returning kernel costs one more primal evaluation. `jvp` and `jacobian` pass the shapes
they know and skip that run. The result has the structure of the return value (an array's
tangent is an array, a float's a float, an integer leaf's None); with k directions, a tuple of k.

More than 16 lanes (directions or seeds) run in chunks of 16: the primal arrays are restored to
their initial values before each chunk, so each chunk starts from the same inputs.
"""
from __future__ import annotations

import numpy as np
from numba.core import types

from ir_passes import ParallelUpdates

from ..annotations import Active, BatchDuplicated, Const, Duplicated, DuplicatedNoNeed
from ..arguments import check_annotation, memory_of
from .batched import BATCHED
from .calls import COMPLEX, Bound, Seeding, leaf_labels, unmask, wrapper
from .forward import FORWARD, MAX_WIDTH
from .returns import UNSET, as_float_seed, is_complex, is_optional_float
from . import strong_zero
from .pipeline import compiled, run
from .reverse import REVERSE, user_kernel
from .value_grad import forward_value_entry


def check_leaves(bound: Bound) -> None:
    """Validate the leaves with the user's argument names (a wrapper's positions mean nothing
    to the user)."""
    for label, ann in zip(leaf_labels(bound.plan), bound.leaves):
        check_annotation(f"argument `{label}`", ann)


_SHADOWED = (Duplicated, DuplicatedNoNeed)


def _shadows_of(leaves) -> list:
    """The shadow arrays of the leaves (a shadow list's items each)."""
    out = []
    for a in leaves:
        if isinstance(a, _SHADOWED):
            out.extend(memory_of(a.shadow) or ())
        elif isinstance(a, BatchDuplicated):
            out.extend(a.shadows)
    return out


def own_seed(s, shadows):
    """A seed array the gradient may read while it writes shadows: copied if it overlaps one."""
    if isinstance(s, np.ndarray) and any(np.may_share_memory(s, t) for t in shadows):
        return s.copy()
    return s


def target_and_args(bound: Bound, per_leaf, lanes=None, with_primal=False):
    """(function to differentiate, its annotated arguments, number of user leaves or None when
    it is the kernel itself, its Seeding or None).

    `per_leaf`: per differentiable return leaf, None or its seeds (one per lane). `lanes`:
    None for plain reverse mode, else the batch width (1 included)."""
    plan = bound.plan
    returns = plan.returns
    seeded = [(leaf, values) for leaf, values in zip(returns.leaves, per_leaf)
              if values is not None]
    result = returns.result_policy(with_primal)
    if plan.direct is not None and not seeded and result == "value":
        return plan.kernel, bound.kernel_args(), None, None
    seeding = Seeding("reverse", tuple(leaf for leaf, _ in seeded), lanes or 1, result)
    shadows = _shadows_of(bound.leaves)
    extra = [Const(own_seed(v, shadows)) for _, values in seeded for v in values]
    if seeded and lanes is None:
        extra.append(Duplicated(np.zeros(1), np.ones(1)))
    elif seeded:
        extra.append(BatchDuplicated(np.zeros(lanes),
                                     tuple(np.eye(1, lanes, j)[0] for j in range(lanes))))
    if result == "masked":      # the float leaves' values, then their Optional marks
        n = 2 * len(returns.floats)
        extra.append(Duplicated(np.zeros(n), np.zeros(n)))
    return wrapper(plan, seeding), list(bound.leaves) + extra, len(bound.leaves), seeding


def to_user_order(bound: Bound, flat, nleaves):
    """Results per target argument -> per user argument (call order, tuples regrouped)."""
    plan = bound.plan
    if nleaves is None:      # the kernel itself, arguments in its order
        leaves = [None] * len(bound.leaves)
        for pos, leaf in enumerate(plan.direct):
            leaves[leaf] = flat[pos]
    else:
        leaves = list(flat[:nleaves])
    return bound.regroup(leaves)


def reverse(bound: Bound, seed, cache, with_primal=False, updates=ParallelUpdates.AUTO,
            memory="tape"):
    """Reverse mode on a bound call: (results per user argument, primal value or None).
    `updates`: how parallel loops add into shared shadows."""
    plan = bound.plan
    returns = plan.returns
    if plan.identity and returns.kind != "structured":     # the kernel's own call
        float_seed = 1.0 if seed is UNSET else 0.0 if seed is None else \
            as_float_seed(seed, "the return value")
        return run(REVERSE, plan.kernel, bound.leaves, (float_seed, with_primal), cache=cache,
                   updates=updates, memory=memory)
    seeds = returns.seeds(seed)
    float_seed = 1.0
    if returns.kind == "float":
        float_seed = 0.0 if seeds[0] is None else seeds[0]
        seeds = ()
    per_leaf = [None if s is None else (s,) for s in seeds]
    target, args, nleaves, seeding = target_and_args(bound, per_leaf, None, with_primal)
    if target is not bound.plan.kernel:
        check_leaves(bound)
    flat, value = run(REVERSE, target, args, (float_seed, with_primal), cache=cache,
                      updates=updates, memory=memory)
    if seeding is not None and seeding.result == "masked":
        vals, n = args[-1].value, len(returns.floats)
        value = unmask(value, {l.path: _leaf_value(l, complex(vals[k], vals[n + k]) if
                                                   is_complex(l.type) else vals[k], vals[n + k])
                               for k, l in enumerate(returns.floats)})
    return to_user_order(bound, flat, nleaves), value


# ---- batched reverse ------------------------------------------------------------------------

def batch_width(leaves) -> int:
    widths = {len(a.shadows) for a in leaves if isinstance(a, BatchDuplicated)}
    if len(widths) > 1:
        raise ValueError(f"BatchDuplicated arguments with different numbers of shadows "
                         f"({sorted(widths)}); every differentiated array needs the same number")
    return widths.pop() if widths else 0


def lane_seeds(returns, seed, width):
    """Per lane, its seeds: (float seed per lane, per-leaf lane seeds or [])."""
    if returns.kind == "float":
        if seed is None:
            return (0.0,) * width, []
        s = 1.0 if seed is UNSET else seed
        lanes = tuple(s) if isinstance(s, (tuple, list)) else (s,) * width
        if len(lanes) != width:
            raise ValueError(f"seed: {len(lanes)} seeds for {width} directions")
        return tuple(float(x) for x in lanes), []
    if returns.kind == "none" or seed is None:
        return (1.0,) * width, []
    if seed is UNSET and is_optional_float(returns.restype):
        seed = [UNSET] * width      # a lone Optional float: 1.0 in every lane
    if not isinstance(seed, (tuple, list)) or len(seed) != width:
        raise TypeError(f"seed: with BatchDuplicated ({width} lanes) and a kernel returning "
                        f"{returns.restype}, seed must be a list of {width} seeds, one per lane, "
                        f"each matching the return value")
    per_lane = [returns.seeds(s) for s in seed]
    per_leaf = []
    for n in range(len(returns.leaves)):
        lane_values = [lane[n] for lane in per_lane]
        if all(v is None for v in lane_values):
            per_leaf.append(None)
        else:
            per_leaf.append(tuple(_zero_like_lane(v, lane_values) for v in lane_values))
    return (1.0,) * width, per_leaf


def _zero_like_lane(v, lane_values):
    if v is not None:
        return v
    other = next(x for x in lane_values if x is not None)
    return np.zeros_like(other) if isinstance(other, np.ndarray) else 0.0


def batched(bound: Bound, seed, width=None):
    """Batched reverse mode; widths over 16 run in chunks of 16 (the primal arrays restored
    before each chunk, so every chunk sees the initial values). `width`: the number of lanes
    when no argument is BatchDuplicated (an array or tuple return seeded per lane)."""
    width = batch_width(bound.leaves) or width or 0
    if width > MAX_WIDTH:
        return _chunked_reverse(bound, seed, width)
    float_seeds, per_leaf = lane_seeds(bound.plan.returns, seed, width)
    target, args, nleaves, _ = target_and_args(bound, per_leaf, lanes=width)
    if target is not bound.plan.kernel:
        check_leaves(bound)
    flat = run(BATCHED, target, args, seed=float_seeds)
    return to_user_order(bound, flat, nleaves)


def _chunked_reverse(bound: Bound, seed, width):
    returns = bound.plan.returns
    if returns.kind == "structured" and seed is not None and seed is not UNSET:
        if not isinstance(seed, (tuple, list)) or len(seed) != width:
            raise TypeError(f"seed: {width} lanes need a list of {width} seeds")
    elif returns.kind == "float" and isinstance(seed, (tuple, list)) and len(seed) != width:
        raise ValueError(f"seed: {len(seed)} seeds for {width} directions")
    saved = save_primals(bound.leaves)
    parts = []
    for start in range(0, width, MAX_WIDTH):
        lanes = slice(start, min(start + MAX_WIDTH, width))
        if start:
            restore_primals(saved)
        leaves = tuple(chunk_annotation(a, lanes) for a in bound.leaves)
        s = seed[lanes] if isinstance(seed, (tuple, list)) else seed
        parts.append(batched(Bound(bound.plan, leaves), s, lanes.stop - lanes.start))
    return _join_lanes(parts)


def chunk_annotation(a, lanes):
    if isinstance(a, BatchDuplicated):
        return BatchDuplicated(a.value, a.shadows[lanes])
    if isinstance(a, Active) and isinstance(a.tangent, (tuple, list)):
        return Active(a.value, tuple(a.tangent)[lanes])
    return a


def _join_lanes(parts):
    """Concatenate per-lane tuples of the chunks' results (None stays None)."""
    def join(items):
        if items[0] is None:
            return None
        if all(isinstance(i, tuple) and not _is_lane_tuple(i) for i in items):
            return tuple(join([i[n] for i in items]) for n in range(len(items[0])))
        out = ()
        for i in items:
            out += tuple(i)
        return out
    return tuple(join([p[n] for p in parts]) for n in range(len(parts[0])))


def _is_lane_tuple(t) -> bool:
    return all(isinstance(x, (float, np.floating)) for x in t)


def save_primals(leaves) -> list:
    """Copies of every primal array (a kernel may write any array it gets)."""
    out = []
    for a in leaves:
        v = getattr(a, "value", None)
        if isinstance(v, np.ndarray) and v.flags.writeable:
            out.append((v, v.copy()))
    return out


def restore_primals(saved) -> None:
    for v, c in saved:
        v[...] = c


# ---- forward mode -----------------------------------------------------------------------------

def forward(bound: Bound, with_primal=False, shapes=None, rerun=True):
    """Forward mode: the return value's tangent(s); (tangent, value) with `with_primal`.
    `shapes`: per differentiable return leaf, its shape (else learnt from a run on copies).
    `rerun=False`: the unguarded tangent function runs once, even when its tangents come out
    inf or NaN (enzyme_py/sparse.py seeds NaN on purpose); `rerun="pattern"`: the guarded one
    with both arms of each decision run (sparse.py's pattern of every input), once."""
    width = _width(bound.leaves)
    if width > MAX_WIDTH:
        return _chunked_forward(bound, with_primal, shapes, width)
    plan = bound.plan
    returns = plan.returns
    result = returns.result_policy(with_primal, forward=True)
    target, args, outs = forward_target(bound, shapes, with_primal)
    batched = width > 1 or _batched(bound.leaves)
    if target is not plan.kernel:
        check_leaves(bound)
    value, ts = _call(target, args, with_primal and result != "none", rerun)
    if with_primal and result == "masked":      # the outputs hold the leaves' values
        value = unmask(value, {l.path: o.value if isinstance(l.type, types.Array)
                               else _leaf_value(l, o.value[0], o.value[-1]) for l, o in
                               zip(returns.leaves, outs)})
    if returns.kind == "float":
        tangent = tuple(ts) if batched else ts[0]
    elif returns.kind == "none":
        tangent = None
    else:
        tangent = _structured_tangents(returns, outs, width, batched)
    return (tangent, value) if with_primal else tangent


def forward_target(bound: Bound, shapes=None, with_primal=False):
    """(function forward mode differentiates, its annotated arguments, the outputs a wrapper
    copies the return value's leaves into) for a bound call of at most 16 lanes."""
    plan = bound.plan
    returns = plan.returns
    width = _width(bound.leaves)
    batched = width > 1 or _batched(bound.leaves)
    if returns.kind == "structured":
        if shapes is None:
            shapes = probe_shapes(bound)
        outs = [_output(leaf, shape, width, batched) for leaf, shape in zip(returns.leaves, shapes)]
        result = returns.result_policy(with_primal, forward=True)
        target = wrapper(plan, Seeding("forward", returns.leaves, width, result))
        return target, list(bound.leaves) + outs, outs
    if plan.direct is not None:
        return plan.kernel, bound.kernel_args(), []
    return wrapper(plan), list(bound.leaves), []


def _call(target, args, keep_value, rerun=True):
    pattern = rerun == "pattern"     # sparse.py's NaN runs (ir_passes transforms/pattern_union.py)
    fwd, prepared = compiled(FORWARD, target, args, guarded="pattern" if pattern else False)
    annotated, shadows, tangents = prepared.args
    primal = [a.value for a in annotated]
    flat = [s for lanes in shadows for s in lanes] + [t for lanes in tangents for t in lanes]
    entry = forward_value_entry(fwd) if keep_value else fwd.entry
    if not rerun or pattern:
        return entry(*primal, *flat)

    def guarded():     # the variant with every product guarded (strong_zero.py)
        g = compiled(FORWARD, target, args, guarded=True)[0]
        return forward_value_entry(g) if keep_value else g.entry

    return strong_zero.call(user_kernel(target), entry, guarded, primal, flat, ())


def _width(leaves) -> int:
    widths = set()
    for a in leaves:
        if isinstance(a, BatchDuplicated):
            widths.add(len(a.shadows))
        elif isinstance(a, Active) and isinstance(a.tangent, (tuple, list)):
            widths.add(len(a.tangent))
    if len(widths) > 1:
        raise ValueError(f"directions differ between arguments ({sorted(widths)}); every "
                         f"differentiated argument needs the same number")
    return widths.pop() if widths else 1


def _batched(leaves) -> bool:
    return any(isinstance(a, BatchDuplicated) or
               (isinstance(a, Active) and isinstance(a.tangent, (tuple, list))) for a in leaves)


def _leaf_value(leaf, value, mark):
    """A float leaf's value from its output; an Optional leaf's is None unless marked."""
    if is_complex(leaf.type):
        return complex(value)
    return None if is_optional_float(leaf.type) and not mark else float(value)


def _output(leaf, shape, width, batched):
    """The output a forward wrapper copies a leaf into: for a float its value at [0], and for an
    Optional float 1.0 at [1] when it is a float (not None)."""
    ty = leaf.type.dtype if isinstance(leaf.type, types.Array) else leaf.type
    dtype = np.dtype(getattr(ty, "type", ty).name)      # Optional(float): its float
    shape = tuple(shape) if shape is not None else (2,) if is_optional_float(leaf.type) else (1,)
    out = np.zeros(shape, dtype)
    if batched:
        return BatchDuplicated(out, tuple(np.zeros(shape, dtype) for _ in range(width)))
    return Duplicated(out, np.zeros(shape, dtype))


def _structured_tangents(returns, outs, width, batched):
    def lane(j):
        by_path = {}
        for leaf, out in zip(returns.leaves, outs):
            t = out.shadows[j] if isinstance(out, BatchDuplicated) else out.shadow
            by_path[leaf.path] = t if isinstance(leaf.type, types.Array) else \
                _leaf_value(leaf, t[0], out.value[-1])
        return _assemble(returns.restype, by_path, ())
    if not batched:
        return lane(0)
    return tuple(lane(j) for j in range(width))


def _assemble(ty, by_path, path):
    if isinstance(ty, types.BaseTuple):
        return tuple(_assemble(t, by_path, path + (i,)) for i, t in enumerate(ty.types))
    return by_path.get(path)


def probe_shapes(bound: Bound) -> list:
    """Per differentiable return leaf, its shape (None for a float), from a plain call of the
    kernel on copies of the arguments."""
    value = plain_call(bound, copy=True)
    shapes = []
    for leaf in bound.plan.returns.leaves:
        v = value
        for i in leaf.path:
            v = v[i]
        shapes.append(np.shape(v) if isinstance(v, np.ndarray) else None)
    return shapes


def plain_call(bound: Bound, copy=False):
    """Call the kernel as the user did (keywords, defaults, tuples), with the leaves' values
    (copies of the arrays with `copy`)."""
    values = [_plain(a.value, copy) for a in bound.leaves]
    pos, kw = [], {}
    for slot in bound.plan.slots:
        v = values[slot.first] if slot.tree is None else regroup_values(slot.tree, slot.cls, values)
        if slot.keyword:
            kw[slot.label] = v
        else:
            pos.append(v)
    return bound.plan.kernel(*pos, **kw)


def _plain(v, copy):
    return v.copy() if copy and isinstance(v, np.ndarray) else v


def regroup_values(tree, cls, values):
    """A tuple argument's value (of class `cls`) from its leaves' values (`tree` of indices)."""
    items = [regroup_values(t, t.cls, values) if isinstance(t, tuple) else values[t] for t in tree]
    if cls in COMPLEX:          # a complex Active scalar from its two parts (no shadow: None)
        return None if None in items else COMPLEX[cls](complex(*items))
    return cls(*items) if cls is not tuple else tuple(items)


def _chunked_forward(bound: Bound, with_primal, shapes, width):
    """More than 16 directions: chunks of 16, the primal arrays restored before each."""
    if shapes is None and bound.plan.returns.kind == "structured":
        shapes = probe_shapes(bound)
    saved = save_primals(bound.leaves)
    tangents, value = [], None
    for start in range(0, width, MAX_WIDTH):
        lanes = slice(start, min(start + MAX_WIDTH, width))
        if start:
            restore_primals(saved)
        leaves = tuple(chunk_annotation(a, lanes) for a in bound.leaves)
        got = forward(Bound(bound.plan, leaves), with_primal, shapes)
        t, value = got if with_primal else (got, None)
        tangents.extend(t if isinstance(t, tuple) else (t,))
    result = tuple(tangents) if bound.plan.returns.kind != "none" else None
    return (result, value) if with_primal else result

