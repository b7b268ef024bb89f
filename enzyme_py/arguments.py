"""Arguments of a differentiated call: the checks that reject bad input before anything runs,
the keys that find a compiled gradient again, which memory the arrays and shadows share, and
copies that keep an array's Numba type. Target-neutral: it knows annotations and NumPy arrays.
"""
from __future__ import annotations

from typing import Any, Optional

import numba
import numpy as np
from numba.core.dispatcher import Dispatcher
from numba.typed import Dict as TypedDict
from numba.typed import List as TypedList

from ir_passes import Activity

from .annotations import Active, BatchDuplicated, Const, Duplicated, DuplicatedNoNeed



# ---- the kernel -------------------------------------------------------------------------------

def is_cuda(kernel: Any) -> bool:
    """numba-cuda's `kernel[blocks, threads]` or `@cuda.jit` kernel: enzyme_py.cuda's (docs/cuda.md).
    Checked by type, so that numba-cuda is imported only when a CUDA kernel comes."""
    t = type(kernel)
    return t.__module__.startswith("numba.cuda") and \
        t.__name__ in ("_LaunchConfiguration", "CUDADispatcher")


# ---- types and keys ---------------------------------------------------------------------------

def typeof(pos: int, value: Any):
    """numba.typeof(value), or a TypeError naming argument `pos`."""
    try:
        return numba.typeof(value)
    except ValueError as exc:
        raise TypeError(f"argument {pos}: Numba cannot type a "
                        f"{type(value).__name__} ({exc})") from None


def type_key(pos: int, value: Any):
    """A cheap key that determines `numba.typeof(value)` (typeof of an array is slow)."""
    if type(value) is np.ndarray:
        f = value.flags
        return (value.dtype, value.ndim, f.c_contiguous, f.f_contiguous,
                f.writeable, f.aligned)
    return typeof(pos, value)


# ---- checks -----------------------------------------------------------------------------------

def validate(pos: int, ann) -> Activity:
    """Check one annotated argument of reverse mode; return its Activity."""
    return check_annotation(f"argument {pos}", ann)


def check_annotation(where: str, ann) -> Activity:
    """Check one annotated argument, named `where` in errors; return its Activity. A
    BatchDuplicated argument's shadows are checked each."""
    if isinstance(ann, Const):
        for arr in memory_of(ann.value) or ():
            check_byte_order(where, arr)
        return Activity.CONST
    if isinstance(ann, Active):
        check_active(where, ann.value)
        return Activity.ACTIVE
    for shadow in ann.shadows if isinstance(ann, BatchDuplicated) else (ann.shadow,):
        check_duplicated(where, ann.value, shadow)
    return Activity.DUP


def check_active(where: str, value) -> None:
    if isinstance(value, np.ndarray):
        raise TypeError(
            f"{where}: Active is for float scalars; for an array use "
            f"Duplicated(array, shadow) with a zeroed shadow of the same shape")
    if isinstance(value, (complex, np.complexfloating)):
        raise TypeError(
            f"{where}: a complex Active scalar is taken by autodiff (and the helpers built on "
            f"it), not here: pass its parts as two Active floats and build complex(re, im) in "
            f"the kernel")
    if not isinstance(value, (float, np.floating)):
        raise TypeError(
            f"{where}: Active needs a real float scalar, got "
            f"{type(value).__name__} {value!r}; pass float(x) or mark it Const")
    check_float_dtype(where, np.asarray(value).dtype, "scalar")


NUMBA_FLOATS = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
                np.dtype(np.complex128))


def check_float_dtype(where: str, dtype, what: str) -> None:
    """Numba compiles float32, float64, complex64 and complex128 only: name the dtype instead
    of a bare Numba error."""
    if dtype not in NUMBA_FLOATS:
        raise TypeError(
            f"{where}: a {dtype} {what} cannot be differentiated: Numba compiles float32, "
            f"float64, complex64 and complex128 only; convert it first (x.astype(np.float64))")


def check_byte_order(where: str, arr: np.ndarray) -> None:
    """Numba compiles native byte order only (its fingerprints ignore it, its typing refuses it)."""
    if not arr.dtype.isnative and arr.dtype.kind != "V":
        raise TypeError(
            f"{where}: a {arr.dtype.str} array (non-native byte order) cannot be passed to a "
            f"Numba kernel; convert it first (x.astype(x.dtype.newbyteorder('=')))")


def is_typed_list(value) -> bool:
    return isinstance(value, TypedList)


def is_typed_dict(value) -> bool:
    return isinstance(value, TypedDict)


@numba.njit
def _items(lst):
    out = []
    for k in range(len(lst)):
        out.append(lst[k])
    return out


def list_items(lst) -> list:
    """A typed List's items as a Python list: one compiled call (iterating from Python costs a
    call per item, about 30 times as much for lists of arrays)."""
    return _items(lst) if len(lst) else []


def check_duplicated(where: str, value, shadow) -> None:
    if is_typed_list(value):
        check_list_shadow(where, value, shadow)
        return
    if is_typed_dict(value):
        check_dict_shadow(where, value, shadow)
        return
    if not isinstance(value, np.ndarray):
        raise TypeError(
            f"{where}: Duplicated is for float arrays, got "
            f"{type(value).__name__}; use Active(x) for a float scalar")
    if value.dtype.kind not in "fc":
        raise TypeError(
            f"{where}: only float arrays can be differentiated, got dtype "
            f"{value.dtype}; mark it Const")
    check_float_dtype(where, value.dtype, "array")
    if not isinstance(shadow, np.ndarray):
        raise TypeError(
            f"{where}: the shadow must be a NumPy array, got "
            f"{type(shadow).__name__}; use np.zeros_like(x)")
    if shadow.dtype.kind not in "fc":
        raise TypeError(
            f"{where}: the shadow must be a float array, got dtype {shadow.dtype}")
    # an empty array's strides are arbitrary (NumPy calls it C and F contiguous either way)
    for what in ("dtype", "shape", "strides") if value.size else ("dtype", "shape"):
        if getattr(value, what) != getattr(shadow, what):
            raise ValueError(
                f"{where}: the shadow's {what} {getattr(shadow, what)} differs "
                f"from the array's {getattr(value, what)}; use np.zeros_like(x)")
    if not shadow.flags.writeable:
        raise ValueError(f"{where}: the shadow is read-only; derivatives are "
                         f"added into it, so it must be writeable")


def check_list_shadow(where: str, value, shadow) -> None:
    """A typed List of float arrays and its shadow: a typed List of the same type and length
    whose items are the items' shadows (check_duplicated, item by item)."""
    if not is_typed_list(shadow):
        raise TypeError(f"{where}: the shadow of a typed List must be a typed List of the items' "
                        f"shadows, got {type(shadow).__name__}; use "
                        f"typed.List([np.zeros_like(a) for a in lst])")
    if len(shadow) != len(value):
        raise ValueError(f"{where}: the shadow list has {len(shadow)} items, the list "
                         f"{len(value)}; give one shadow per item")
    items = list_items(value)
    for k, (v, s) in enumerate(zip(items, list_items(shadow))):
        if not isinstance(v, np.ndarray):
            raise TypeError(f"{where}: Duplicated is for typed Lists of float arrays; item {k} "
                            f"is a {type(v).__name__}; mark the list Const")
        check_duplicated(f"{where}, item {k}", v, s)
    if items and numba.typeof(shadow) != numba.typeof(value):
        raise TypeError(f"{where}: the shadow list's type {numba.typeof(shadow)} differs from "
                        f"the list's {numba.typeof(value)}; build it the same way")


def check_dict_shadow(where: str, value, shadow) -> None:
    """A typed Dict of float arrays and its shadow: a typed Dict of the same type and keys whose
    values are the values' shadows (check_duplicated, key by key)."""
    if not is_typed_dict(shadow):
        raise TypeError(f"{where}: the shadow of a typed Dict must be a typed Dict of the values' "
                        f"shadows under the same keys, got {type(shadow).__name__}")
    if set(shadow.keys()) != set(value.keys()):
        raise ValueError(f"{where}: the shadow dict's keys differ from the dict's; give one "
                         f"shadow per key")
    for k, v in value.items():
        if not isinstance(v, np.ndarray):
            raise TypeError(f"{where}: Duplicated is for typed Dicts of float arrays; the value "
                            f"of {k!r} is a {type(v).__name__}; mark the dict Const")
        check_duplicated(f"{where}, key {k!r}", v, shadow[k])
    if len(value) and numba.typeof(shadow) != numba.typeof(value):
        raise TypeError(f"{where}: the shadow dict's type {numba.typeof(shadow)} differs from "
                        f"the dict's {numba.typeof(value)}; build it the same way")


def shadow_pairs(value, shadow) -> list:
    """[(primal array, its shadow)] of a Duplicated argument: the array, or each item of a typed
    List with the shadow list's item at the same index."""
    if is_typed_list(value):
        return list(zip(list_items(value), list_items(shadow)))
    if is_typed_dict(value):
        return [(v, shadow[k]) for k, v in value.items()]
    return [(value, shadow)]


def check_distinct_lanes(where: str, lanes) -> None:
    """k shadows of one argument (one per direction or seed) must not share memory."""
    arrays = [x for lane in lanes for x in memory_of(lane) or ()]
    for n, s in enumerate(arrays):
        for t in arrays[n + 1:]:
            if np.may_share_memory(s, t):
                raise ValueError(f"{where}: two of its shadows share memory; each direction needs "
                                 f"a shadow of its own")


# ---- aliasing ----------------------------------------------------------------------------------

_NO_MEMORY = (int, float, complex, bool, str, type(None), np.number, np.bool_, Dispatcher)


def memory_of(value) -> Optional[list]:
    """The arrays through which `value` reaches memory (an ndarray or a subclass, the arrays in
    a tuple, named tuple, list, typed List or typed Dict's values at any depth, a memoryview's or
    bytearray's buffer, a record's bytes), [] for a value that holds none (a number, a string, a
    function), or None when it cannot be determined (a jitclass instance): then it may share
    memory with anything."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (tuple, list, TypedList, TypedDict)):
        out = []
        items = list_items(value) if isinstance(value, TypedList) else \
            list(value.values()) if isinstance(value, TypedDict) else value
        for v in items:
            part = memory_of(v)
            if part is None:
                return None
            out += part
        return out
    if isinstance(value, np.void):       # a record of a structured array is a view into it
        return [np.frombuffer(memoryview(value), np.uint8)] if value.nbytes else []
    if isinstance(value, _NO_MEMORY):
        return []
    if isinstance(value, (bytes, bytearray)):
        return [np.frombuffer(value, np.uint8)] if len(value) else []
    if isinstance(value, memoryview):
        try:
            return [np.asarray(value)]
        except (TypeError, ValueError, NotImplementedError):
            return None
    return None


def _memory(annotated) -> list:
    """[(argument position, its arrays or None)] of the annotated arguments' values."""
    return [(i, memory_of(a.value)) for i, a in enumerate(annotated)]


def check_aliasing(annotated) -> None:
    """Reject shadows that alias primal memory (arrays at any depth of any argument), and one
    memory with two shadows."""
    dups = [(i, v, s) for i, a in enumerate(annotated)
            if isinstance(a, (Duplicated, DuplicatedNoNeed)) for v, s in shadow_pairs(a.value, a.shadow)]
    arrays = [(i, arr) for i, found in _memory(annotated) for arr in found or ()]
    hit = first_overlap([s for _, _, s in dups], [arr for _, arr in arrays])
    if hit is not None:
        raise ValueError(
            f"argument {dups[hit[0]][0]}: its shadow shares memory with the array of "
            f"argument {arrays[hit[1]][0]}; shadows need memory of their own")
    for n, m in overlapping_pairs([a for _, a, _ in dups]):
        (i, a, sa), (j, b, sb) = dups[n], dups[m]
        if not same_shadow(a, sa, b, sb):
            raise ValueError(
                    f"arguments {i} and {j} are the same (or overlapping) "
                    f"memory but have different shadows; pass the same shadow"
                    if i != j else f"argument {i}: two of its items are the same (or "
                    f"overlapping) memory but have different shadows; pass the same shadow")


def check_aliasing_lanes(annotated, shadows) -> None:
    """check_aliasing with k shadows per differentiated array (`shadows`: their lists, in
    order): shadows never alias primal memory; the same memory passed twice has the same
    shadows."""
    arrays = [(i, arr) for i, found in _memory(annotated) for arr in found or ()]
    dups = [(i, a) for i, a in enumerate(annotated) if not isinstance(a, (Const, Active))]
    owned = [(i, x) for (i, _), lanes in zip(dups, shadows) for lane in lanes
             for x in memory_of(lane) or ()]
    hit = first_overlap([x for _, x in owned], [arr for _, arr in arrays])
    if hit is not None:
        raise ValueError(f"argument {owned[hit[0]][0]}: its shadow shares memory with the array "
                         f"of argument {arrays[hit[1]][0]}; shadows need memory of their own")
    pairs = [(i, [shadow_pairs(a.value, s) for s in lanes]) for (i, a), lanes in zip(dups, shadows)]
    items = [(i, v, [lane[k][1] for lane in lanes]) for i, lanes in pairs
             for k, (v, _) in enumerate(lanes[0] if lanes else ())]
    for n, m in overlapping_pairs([a for _, a, _ in items]):
        (i, a, la), (j, b, lb) = items[n], items[m]
        if not all(same_shadow(a, s, b, t) for s, t in zip(la, lb)):
            raise ValueError(f"arguments {i} and {j} are the same (or overlapping) memory "
                             f"but have different shadows; pass the same shadows")


def same_shadow(a, sa, b, sb) -> bool:
    """Whether overlapping primal arrays a, b have shadows sa, sb laid out like them."""
    offset = b.ctypes.data - a.ctypes.data
    return sb.ctypes.data - sa.ctypes.data == offset and np.may_share_memory(sa, sb)


def distinct_memory(arrays) -> bool:
    """Do no two of `arrays` share memory?"""
    return not overlapping_pairs(arrays, first=True)


def span(a) -> tuple:
    """[lo, hi) bytes of memory array `a` reaches, what np.may_share_memory compares (an empty
    array reaches none)."""
    if a.size == 0:
        return a.ctypes.data, a.ctypes.data
    lo = hi = a.ctypes.data
    for n, st in zip(a.shape, a.strides):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return lo, hi + a.itemsize


def overlapping_pairs(arrays, first: bool = False) -> list:
    """The pairs (k, l), k < l, of `arrays` that may share memory (np.may_share_memory: their
    byte ranges overlap; an empty array shares none), in order; with `first`, at most one. A sweep
    over the sorted ranges: a list of many arrays costs n log n, not n^2."""
    spans = sorted((*span(a), k) for k, a in enumerate(arrays) if a.size)
    out, open_ = [], []
    for lo, hi, k in spans:
        open_ = [(h, m) for h, m in open_ if h > lo]
        for _, m in open_:
            out.append((min(k, m), max(k, m)))
            if first:
                return out
        open_.append((hi, k))
    return sorted(out)


def first_overlap(xs, ys):
    """The first (k, l) in order with xs[k] and ys[l] sharing memory, or None."""
    pairs = [(k, m - len(xs)) for k, m in overlapping_pairs(list(xs) + list(ys))
             if k < len(xs) <= m]
    return min(pairs) if pairs else None


def argument_arrays(annotated) -> Optional[list]:
    """Every array the annotated arguments' values reach (memory_of), or None when one of them
    has memory that cannot be determined."""
    out = []
    for _, found in _memory(annotated):
        if found is None:
            return None
        out += found
    return out


def disjoint(annotated) -> bool:
    """Do the arrays the arguments reach (at any depth: memory_of) and the shadows occupy
    disjoint memory? Then a variant that knows it caches less, and tells LLVM (`noalias`). An
    argument whose memory cannot be determined makes it False."""
    arrays = argument_arrays(annotated)
    if arrays is None:
        return False
    arrays += [s for a in annotated if isinstance(a, (Duplicated, DuplicatedNoNeed))
               for _, s in shadow_pairs(a.value, a.shadow)]
    return distinct_memory(arrays)


# ---- copies that keep an array's Numba type (dtype, ndim, layout, readonly flag) ---------------

def clone(a: np.ndarray, dtype=None, writeable: Optional[bool] = None) -> np.ndarray:
    """A copy of `a` with the same shape and memory layout (C, F, or the same strides).

    With `dtype`, the copy has that dtype and strides scaled by the itemsize ratio when the
    layout is neither C nor F contiguous.
    """
    dt = np.dtype(dtype) if dtype is not None else a.dtype
    if a.ndim == 0 or a.flags.c_contiguous:
        out = np.empty(a.shape, dtype=dt, order="C")
    elif a.flags.f_contiguous:
        out = np.empty(a.shape, dtype=dt, order="F")
    else:
        if any(s % a.itemsize for s in a.strides):
            raise TypeError("check_gradient: cannot copy an array whose strides are not a "
                            f"multiple of its itemsize (strides={a.strides})")
        strides = tuple(s // a.itemsize * dt.itemsize for s in a.strides)
        lo = sum(s * (n - 1) for s, n in zip(strides, a.shape) if s < 0 and n > 0)
        hi = sum(s * (n - 1) for s, n in zip(strides, a.shape) if s > 0 and n > 0) + dt.itemsize
        buf = np.zeros((hi - lo) // dt.itemsize + 1, dtype=dt)  # aligned for dt
        out = np.ndarray(a.shape, dtype=dt, buffer=buf, offset=-lo, strides=strides)
    out[...] = a
    if writeable is None:
        writeable = a.flags.writeable
    out.flags.writeable = bool(writeable)
    return out


def zeros_like_layout(a: np.ndarray) -> np.ndarray:
    """A zeroed array with a's shape, dtype and strides (the zero seeds' shadow)."""
    if a.flags.c_contiguous:
        return np.zeros(a.shape, a.dtype, order="C")
    if a.flags.f_contiguous:
        return np.zeros(a.shape, a.dtype, order="F")
    z = clone(a, writeable=True)
    z[...] = 0
    return z


def copy_same_layout(a: np.ndarray) -> np.ndarray:
    """A copy with the same shape, dtype and strides (so the compiled gradient accepts it)."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return np.array(a, order="K", copy=True)
    lo = sum(min(0, s * (n - 1)) for s, n in zip(a.strides, a.shape))
    hi = sum(max(0, s * (n - 1)) for s, n in zip(a.strides, a.shape)) + a.itemsize
    buf = np.zeros((hi - lo) // a.itemsize + 1, a.dtype)
    view = np.lib.stride_tricks.as_strided(buf[-lo // a.itemsize:], a.shape, a.strides)
    view[...] = a
    return view


def copy_value(v):
    """A copy of an array (copy_same_layout) or of a typed List's or Dict's arrays; other values
    as they are."""
    if isinstance(v, np.ndarray):
        return copy_same_layout(v)
    if is_typed_list(v) and len(v):
        return TypedList([copy_value(x) for x in list_items(v)])
    if is_typed_dict(v):
        ty = numba.typeof(v)
        out = TypedDict.empty(ty.key_type, ty.value_type)
        for k, x in v.items():
            out[k] = copy_value(x)
        return out
    return v
