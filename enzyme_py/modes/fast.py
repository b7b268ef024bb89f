"""The fast path of a repeated reverse-mode call: `autodiff(kernel, *annotated)` with positional
arguments in the kernel's order and a float or no return (the calls an optimiser loop makes).

The full path (api.autodiff: binding, checks, aliasing, the gradient cache) costs tens of
microseconds in Python. When it succeeds with arrays and shadows in memory of their own,
`remember` files the gradient's entry in a table on the dispatcher under the call's *key*: per
argument its annotation class, the Python type of a scalar, and Numba's typing fingerprint of
each value and shadow (`numba._dispatcher.compute_fingerprint`: dtype, ndim, layout, read-only
flag; what Numba's own dispatcher keys its compiled versions on). The fingerprint ignores byte
order and alignment, so only plain arrays of a native bool, integer, float or complex dtype
(which the fingerprint's type number then determines exactly) and aligned memory are taken.
Const values are plain arrays or scalars: a tuple, memoryview, ndarray subclass, record or any
other container takes the full path, whose aliasing check looks inside it. A later call with
the same key checks in Python only what the key does not determine:

- each shadow has its array's shape and strides;
- the arrays and shadows occupy disjoint memory, proven by ownership: each is an array that owns
  its memory, or an aligned view of one (numpy points a view's base at the owner), and no two
  share an owner. The same array twice, views of one array, memory from a buffer or from Numba:
  all take the full path, which checks overlaps exactly and has the variant for aliased memory.

After `RUNNER_CALLS` such calls of one structure, a *runner* is compiled for it: an @njit
function that makes the same checks in compiled code (shadow shapes and strides, and byte ranges
that do not overlap, so views of one array are taken too) and calls the entry. It is compiled for
the entry's signature only (other types: Numba's TypeError, before anything runs; other memory:
`GuardMiss`, before the gradient runs; both go to the full path). Compiling it costs about a
third of a second, once per structure and process, like a small gradient's build: paid by loops
of more than RUNNER_CALLS calls, which then save 2-5 microseconds per call.

Anything else (keywords, defaults left out, containers, array returns, other modes, batches)
never reaches the tables; an int the entry's int64 cannot hold misses before anything runs. The
full path stays the only place that raises errors (tests/test_fast_path_agreement.py).
"""
from __future__ import annotations

import threading
import weakref

import numba
import numpy as np
from numba._dispatcher import compute_fingerprint
from numba.core.dispatcher import Dispatcher

from ..annotations import Active, BatchDuplicated, Const, Duplicated, DuplicatedNoNeed
from ..bridge.frozen import register_attr
from .returns import UNSET
from . import strong_zero
from .pipeline import compiled
from .reverse import REVERSE, written_positions

RUNNER_CALLS = 1000                 # fast calls of one structure before its runner is compiled
TABLE = register_attr("_enzyme_py_fast_calls")     # dispatcher attribute: a Tables
_registered = weakref.WeakSet()     # dispatchers holding tables (forget_all)
_lock = threading.Lock()
_ndarray = np.ndarray
_SHADOWED = (Duplicated, DuplicatedNoNeed)
_ANNOTATED = (Const, Active, Duplicated, DuplicatedNoNeed)
_NO_MATCH = "No matching definition"
# Const values the fast path takes besides plain arrays: scalars, which hold no memory. Anything
# else (tuples, memoryviews, ndarray subclasses, records, jitclass instances) takes the full
# path, whose aliasing check looks inside it (arguments.memory_of).
_SCALARS = frozenset([int, float, complex, bool, str, type(None)] + [
    t for t in set(np.sctypeDict.values()) if issubclass(t, (np.number, np.bool_))])
_UNTYPED = (TypeError, ValueError, NotImplementedError, OverflowError)
_PLAIN_KINDS = frozenset("biufc")


def _plain_dtype(dt, kinds=_PLAIN_KINDS):
    """A native-byte-order bool, integer, float or complex dtype: one that Numba's fingerprint
    (its type number: kind and size) determines exactly. Numba's fingerprint ignores byte order,
    so a '>f8' array would otherwise pass for a float64 one."""
    return dt.isnative and dt.kind in kinds


class GuardMiss(Exception):
    """Raised by a runner when the call's memory is not what its gradient assumes."""


class Entry:
    """A remembered gradient entry and where its derivatives go in the result: `nones`, the
    result when no argument is Active; `active`, the positions of the Active ones."""
    __slots__ = ("entry", "active", "nones", "signature", "annotated", "calls", "guarded",
                 "written")

    def __init__(self, grad, annotated, guarded):
        self.entry = grad.entry
        self.guarded = guarded      # () -> the entry of the guarded variant (strong_zero.py)
        self.written = written_positions(grad, len(annotated))
        self.active = tuple(grad.spec.active_positions)
        self.nones = (None,) * len(annotated)
        self.signature = grad.entry.signatures[0]
        self.annotated = annotated
        self.calls = 0


class Tables:
    """A dispatcher's remembered calls: `by_key` (the full key: Entry), `runners` (structure:
    (runner, Entry))."""
    __slots__ = ("by_key", "runners")

    def __init__(self):
        self.by_key = {}
        self.runners = {}


def _owner(a, ndarray=_ndarray):
    """The ndarray owning the memory of `a` (itself or the base of a view), or None when that is
    not provable cheaply or `a` is not aligned."""
    f = a.flags
    if not f.aligned:
        return None
    base = a.base
    if base is None:
        return a if f.owndata else None
    if type(base) is not ndarray or base.base is not None:
        return None
    return base if base.flags.owndata else None


def split(args, cache, fingerprint=compute_fingerprint, ndarray=_ndarray, owner=_owner,
          scalars=_SCALARS, kinds=_PLAIN_KINDS):
    """(key, primal values, shadows) of a call the fast path can take, else None.

    Arrays have plain dtypes (_plain_dtype), so the fingerprint determines the dtype exactly,
    byte order included. A shadow needs no fingerprint of its own: with its array's shape and strides (so
    its layout) and dtype, and writeable, it has the type the full path accepted."""
    key = [cache]
    values = []
    shadows = []
    owners = set()
    n = 0
    for a in args:
        t = type(a)
        if t is Duplicated or t is DuplicatedNoNeed:
            v = a.value
            s = a.shadow
            if type(v) is not ndarray or type(s) is not ndarray:
                return None
            dt = v.dtype
            if s.dtype is not dt \
                    or not dt.isnative or dt.kind not in kinds \
                    or v.shape != s.shape or v.strides != s.strides or not s.flags.writeable:
                return None
            owners.add(id(owner(v)))
            owners.add(id(owner(s)))
            n += 2
            key.append(t)
            key.append(fingerprint(v))
            values.append(v)
            shadows.append(s)
            continue
        if t is Const or t is Active:
            v = a.value
        elif t is BatchDuplicated:
            return None
        else:                       # a bare value is Const
            v = a
        tv = type(v)
        if tv is ndarray:
            dt = v.dtype
            if not dt.isnative or dt.kind not in kinds:
                return None
            owners.add(id(owner(v)))
            n += 1
        elif tv not in scalars:
            return None
        key.append(t)
        key.append(type(v))
        key.append(fingerprint(v))
        values.append(v)
    # id(None) is there when an owner is not provable
    if len(owners) != n or id(None) in owners:
        return None
    return tuple(key), values, shadows


def structure_of(annotated, cache):
    """The key of a call's structure (what a runner's own dispatch does not check): per
    argument its annotation class and, for a scalar or other value, its Python type."""
    key = [cache]
    for a in annotated:
        t = type(a)
        key.append(t)
        if t is not Duplicated and t is not DuplicatedNoNeed:
            key.append(type(a.value if t is Const or t is Active else a))
    return tuple(key)


def _result(entry, derivs):
    if not entry.active:
        return entry.nones
    result = list(entry.nones)
    for pos, d in zip(entry.active, derivs):
        result[pos] = d
    return tuple(result)


def call(kernel, args, seed, cache):
    """The result of `autodiff(kernel, *args, seed=seed, cache=cache)` through a remembered
    entry, or None when the call must take the full path."""
    tables = getattr(kernel, TABLE, None)
    if tables is None:
        return None
    if seed is UNSET:
        seed = 1.0
    elif seed is None:
        seed = 0.0
    elif type(seed) is not float:
        return None
    if tables.runners:
        result = _through_runner(kernel, tables, args, seed, cache)
        if result is not None:
            return result
    try:
        parts = split(args, cache)
    except _UNTYPED:           # no fingerprint for this value (an int beyond 64 bits, ...)
        return None
    if parts is None:
        return None
    key, values, shadows = parts
    entry = tables.by_key.get(key)
    if entry is None:
        return None
    try:
        derivs = strong_zero.call(kernel, entry.entry, entry.guarded, values, shadows, (seed,),
                                  None, entry.written)
    except OverflowError:      # an int its signature's int64 cannot hold: nothing has run
        return None
    entry.calls += 1
    if entry.calls == RUNNER_CALLS:
        _add_runner(tables, entry, cache)
    return _result(entry, derivs)


def _add_runner(tables, entry, cache):
    """Compile the runner of a remembered entry's structure."""
    try:
        tables.runners[structure_of(entry.annotated, cache)] = (build_runner(entry), entry)
    except Exception:          # noqa: BLE001 - the fast path in Python keeps working
        pass


def _through_runner(kernel, tables, args, seed, cache, ndarray=_ndarray, kinds=_PLAIN_KINDS):
    """The runner's result, or None. The runner's own dispatch sees Numba's fingerprints,
    which ignore byte order and alignment: arrays of other dtypes (_plain_dtype), shadows of
    another dtype than their array's, and unaligned arrays miss."""
    structure = [cache]
    values = []
    shadows = []
    for a in args:
        t = type(a)
        structure.append(t)
        if t is Duplicated or t is DuplicatedNoNeed:
            v = a.value
            s = a.shadow
            if type(v) is not ndarray or type(s) is not ndarray:
                return None
            dt = v.dtype
            if s.dtype is not dt \
                    or not dt.isnative or dt.kind not in kinds or not v.flags.aligned \
                    or not s.flags.aligned:
                return None
            values.append(v)
            shadows.append(s)
            continue
        v = a.value if t is Const or t is Active else a
        structure.append(type(v))
        if type(v) is ndarray:
            dt = v.dtype
            if not dt.isnative or dt.kind not in kinds or not v.flags.aligned:
                return None
        values.append(v)
    found = tables.runners.get(tuple(structure))
    if found is None:
        return None
    runner, entry = found
    try:
        derivs = strong_zero.call(kernel, runner, entry.guarded, values, shadows, (seed,), None,
                                  entry.written)
    except (GuardMiss, OverflowError):     # other memory; an int Numba types otherwise
        return None
    except TypeError as exc:           # Numba's dispatch: other types; nothing has run
        if str(exc).startswith(_NO_MATCH):
            return None
        raise
    return _result(entry, derivs)


def remember(kernel, args, cache) -> None:
    """After a successful full-path call of `kernel(*args)` (positional, in the kernel's order,
    a float or no return), file its entry for the fast path."""
    if not isinstance(kernel, Dispatcher):
        return
    try:
        parts = split(args, cache)
    except _UNTYPED:
        return
    if parts is None:
        return
    grad = compiled(REVERSE, kernel, args, cache=cache)[0]     # the gradient cache's entry
    annotated = tuple(a if type(a) in _ANNOTATED else Const(a) for a in args)
    with _lock:
        tables = getattr(kernel, TABLE, None)
        if tables is None:
            tables = Tables()
            setattr(kernel, TABLE, tables)
            _registered.add(kernel)
        tables.by_key[parts[0]] = Entry(grad, annotated, _guarded(kernel, annotated, cache))


@numba.njit(cache=True)
def _span(a):
    """[first byte, one past the last byte) that `a` touches; (0, 0) when it is empty."""
    if a.size == 0:
        return 0, 0
    lo = np.int64(a.ctypes.data)
    hi = lo
    for k in range(a.ndim):
        reach = (a.shape[k] - 1) * a.strides[k]
        if reach < 0:
            lo += reach
        else:
            hi += reach
    return lo, hi + a.itemsize


def _guarded(kernel, annotated, cache):
    """A function building (on first call) the guarded variant's entry of a remembered call."""
    ref = weakref.ref(kernel)

    def guarded():
        return compiled(REVERSE, ref(), annotated, cache=cache, guarded=True)[0].entry
    return guarded


def build_runner(entry: Entry):
    """The compiled runner (module docstring) for a remembered entry."""
    annotated = entry.annotated
    values = [f"v{i}" for i in range(len(annotated))]
    shadows = [f"s{i}" for i, a in enumerate(annotated) if isinstance(a, _SHADOWED)]
    arrays = [f"v{i}" for i, a in enumerate(annotated) if type(a.value) is np.ndarray]
    lines = [f"def runner({', '.join(values + shadows)}, seed):"]
    for s in shadows:
        v = "v" + s[1:]
        lines.append(f"    if {v}.shape != {s}.shape or {v}.strides != {s}.strides:")
        lines.append("        raise GuardMiss")
    spans = arrays + shadows
    for n, a in enumerate(spans):
        lines.append(f"    lo{n}, hi{n} = _span({a})")
    for n in range(len(spans)):
        for m in range(n + 1, len(spans)):
            lines.append(f"    if lo{n} < hi{m} and lo{m} < hi{n}:")
            lines.append("        raise GuardMiss")
    lines.append(f"    return entry({', '.join(values + shadows)}, seed)")
    scope = {"entry": entry.entry, "GuardMiss": GuardMiss, "_span": _span}
    exec(compile("\n".join(lines) + "\n", "<enzyme_py fast runner>", "exec"), scope)
    runner = numba.njit(no_cfunc_wrapper=True)(scope["runner"])
    runner.compile(entry.signature)
    runner.disable_compile()
    return runner


def forget_all() -> None:
    """Drop every remembered entry and runner (clear_cache)."""
    with _lock:
        for kernel in list(_registered):
            if hasattr(kernel, TABLE):
                delattr(kernel, TABLE)
        _registered.clear()
