"""The strong zero of products, optimistically: a zero adjoint (reverse mode) or tangent
(forward mode) times an inf or NaN partial counts as 0 (docs/semantics.md, "NaN and infinity:
strong zeros").

A gradient's products (fmul, fma) are guarded only in kernels that test a float for NaN or
infinity (ir_passes rules/partials.py): a guard on every product costs 1.4x to 2.8x of a
gradient's time. So a call runs the unguarded gradient first, on a snapshot of what it may
change (every shadow, the primal arrays it may write: ir_passes' written_params); when a shadow or
a returned derivative then holds an inf or NaN, the arrays are put back from the snapshot and
the call is redone with the guarded variant (built on first need). A call whose writable
arguments hold memory a snapshot cannot copy runs the guarded variant straight away. The
caller sees exactly the guarded result: a true inf or NaN derivative comes out of the guarded
gradient too.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np
from numba.typed import Dict as TypedDict
from numba.typed import List as TypedList

from ..arguments import list_items
from ..bridge.frozen import as_dispatcher

_ndarray = np.ndarray
_IMMUTABLE = (int, float, complex, bool, str, bytes, type(None), np.generic)
_lock = threading.Lock()
_reruns = weakref.WeakKeyDictionary()    # dispatcher -> guarded reruns in this process


def reruns(kernel) -> int:
    """How many calls of `kernel`'s gradient ran guarded in this process (redone, or guarded
    straight away)."""
    try:
        return _reruns.get(as_dispatcher(kernel), 0)
    except TypeError:
        return 0


def _snapshot(values, shadows, ndarray=_ndarray, immutable=_IMMUTABLE):
    """[(object, copy)] of every writeable array among `values` (tuples, typed Lists and Dicts
    looked into) and `shadows`, and of each typed List's and Dict's items (the kernel may append,
    pop or insert); None when a value may hold other mutable memory (a record, a typed container
    of other items), which a rerun could not put back."""
    saved = []
    stack = list(values) + list(shadows)
    while stack:
        v = stack.pop()
        t = type(v)
        if t is ndarray or isinstance(v, ndarray):
            if v.flags.writeable and v.size:
                saved.append((v, v.copy()))
        elif t is tuple or isinstance(v, tuple):
            stack.extend(v)
        elif isinstance(v, TypedList):
            items = list_items(v)
            saved.append((v, items))
            stack.extend(items)
        elif isinstance(v, TypedDict):
            saved.append((v, dict(v)))
            stack.extend(v.values())
        elif not isinstance(v, immutable) or isinstance(v, np.void):
            return None
    return saved


def _restore(saved) -> None:
    """Put back what _snapshot saved: containers' items first, then the arrays' contents."""
    for obj, copy in saved:
        if isinstance(obj, TypedList):
            obj.clear()
            for item in copy:           # (extend() of a Python list types it as a reflected list)
                obj.append(item)
        elif isinstance(obj, TypedDict):
            obj.clear()
            obj.update(copy)
    for obj, copy in saved:
        if isinstance(obj, _ndarray):
            obj[...] = copy


def _finite(shadows, derivs, ndarray=_ndarray) -> bool:
    stack = list(shadows) + [derivs]
    while stack:
        d = stack.pop()
        if isinstance(d, ndarray):
            if d.dtype.kind in "fc" and not np.isfinite(d).all():
                return False
        elif isinstance(d, tuple):
            stack.extend(d)
        elif isinstance(d, TypedList):
            stack.extend(list_items(d))
        elif isinstance(d, TypedDict):
            stack.extend(d.values())
        elif isinstance(d, (float, complex, np.floating, np.complexfloating)) \
                and not np.isfinite(d):
            return False
    return True


def call(kernel, run, guarded, values, shadows, extra, derivs_of=None, written=None):
    """`run(*values, *shadows, *extra)`, redone by `guarded()(...)` (the guarded entry) when its
    shadows or derivatives hold an inf or NaN. When an argument the kernel may write holds
    memory that could not be put back (a typed list, a jitclass, a record), the guarded entry
    runs straight away. `derivs_of(result)`: the derivatives in `run`'s result (default: the
    result itself). `written`: the positions of the values the kernel may write (None: any)."""
    saved = _snapshot(values if written is None else [values[i] for i in written], shadows)
    if saved is None:
        count(kernel)
        return guarded()(*values, *shadows, *extra)
    result = run(*values, *shadows, *extra)
    derivs = result if derivs_of is None else derivs_of(result)
    if _finite(shadows, derivs):
        return result
    _restore(saved)
    count(kernel)
    return guarded()(*values, *shadows, *extra)


def count(kernel) -> None:
    with _lock:
        try:
            _reruns[kernel] = _reruns.get(kernel, 0) + 1
        except TypeError:
            pass
