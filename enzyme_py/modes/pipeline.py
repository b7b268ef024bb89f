"""One build pipeline for every mode.

A mode declares a `ModeSpec`: what it captures, how it names its functions, its transform
(ir_passes' reverse mode, forward mode, or one over the other), the record its entry is made
from and the @njit entry. `build(mode, job)` runs the steps every mode shares:

    disk-cache slot -> capture -> cleanup -> names -> transform -> verify -> link -> entry -> save

and `cached(mode, dispatcher, key, make)` keeps what was built in one table per kernel (dropped
when Numba recompiles the kernel, emptied by `clear_cache`). `compiled(mode, kernel, args)`
validates a call with the mode's `prepare` and fetches or builds its result; `run` then calls
its entry with the mode's `call`. The callers (api.py, bound.py) come here, and the pipeline
calls the mode's functions, each of which returns: no module is entered twice on a call's path.
A new mode is one module declaring its ModeSpec (docs/architecture.md, "a new mode").
"""
from __future__ import annotations

import dataclasses
import threading
import weakref
from collections import Counter
from functools import partial
from typing import Any, Callable

from .. import disk_cache, timings
from ..bridge.frozen import register
from ..bridge.link import compile_library, prepare_module
from ..bridge.memo import forget_all
from .records import NOT_STORED, TEXTS, Job, ModeSpec

_lock = threading.RLock()
_built = register(weakref.WeakKeyDictionary())     # dispatcher -> {(label, key): result}
counts = Counter()          # builds per mode label in this process (disk-cache hits excluded)


def cached(mode: ModeSpec, dispatcher, key, make: Callable[[], Any]):
    """What was built for `key` of this kernel in this mode, else `make()`'s result (kept
    unless it is a failure returned with an `error`). Builds are serialized."""
    key = (mode.label, key)
    per_kernel = _built.get(dispatcher)
    found = per_kernel.get(key) if per_kernel is not None else None
    if found is not None:
        return found
    with _lock:
        per_kernel = _built.setdefault(dispatcher, {})
        found = per_kernel.get(key)
        if found is None:
            found = make()
            if getattr(found, "error", None) is None:
                per_kernel[key] = found
    return found


def compiled(mode: ModeSpec, kernel, args, **options) -> tuple:
    """(the cached or new result for this call, its Prepared): `mode.prepare` validates it."""
    prepared = mode.prepare(kernel, args, **options)
    return cached(mode, prepared.dispatcher, prepared.key, partial(_build_job, mode, prepared)), \
        prepared


def run(mode: ModeSpec, kernel, args, extra=(), **options):
    """Build (or fetch) the result for this call and call its entry: `mode.call(result,
    prepared, guarded, *extra)`."""
    result, prepared = compiled(mode, kernel, args, **options)
    return mode.call(result, prepared, partial(_guarded, mode, kernel, args, options), *extra)


def _build_job(mode, prepared):
    job = prepared.job()
    try:
        return build(mode, job)
    except Exception as exc:
        again = mode.fallback(job, exc) if mode.fallback is not None else None
        if again is None:
            raise
    return build(mode, again)


def _guarded(mode, kernel, args, options):
    return compiled(mode, kernel, args, **dict(options, guarded=True))[0]


def builds(dispatcher, mode: ModeSpec) -> list:
    """The results of one mode kept for a kernel."""
    with _lock:
        return [v for (label, _), v in _built.get(dispatcher, {}).items() if label == mode.label]


def clear() -> None:
    """Forget every build of every mode, and the captures (the next call rebuilds)."""
    with _lock:
        _built.clear()
    forget_all()


def build(mode: ModeSpec, job: Job):
    """Run the pipeline for one job (module docstring), the garbage collector held off; stage
    timings in the result's `timings` (enzyme_py/timings.py)."""
    with timings.record() as table, timings.gc_paused():
        result = _build(mode, job)
    func = getattr(job.dispatcher, "py_func", job.dispatcher)
    timings.print_table(table, getattr(func, "__qualname__", ""))
    object.__setattr__(result, "timings", dict(table))
    return result


def _build(mode, job):
    dispatcher = job.dispatcher
    slot = None
    if mode.stored and not job.keep_failure:      # docs/caching.md
        slot = disk_cache.open_slot(mode.label, dispatcher, tuple(job.argtypes) + tuple(job.entry_types),
                                    mode.key(job), mode.entry, job.argtypes)
    if slot is not None and slot.hit:
        return mode.result(slot.hit)
    cap = mode.capture(job)
    activity = mode.activity(job, cap)
    fields = {"captured": cap.text, "kernel_name": cap.fn_name, "activity": activity}
    try:
        fields["cleaned"] = mode.clean(job, cap)
        names = mode.names(job, cap, activity)
        if slot is not None and mode.roles:
            names = tuple(slot.symbol(role) for role in mode.roles)
        gen = mode.transform(job, cap, fields["cleaned"], activity, names)
        fields.update(generated=gen.text, layout=gen.layout, **gen.extra)
        if mode.entry is not None:
            _link(mode, job, cap, names[-1], fields)
    except Exception as exc:
        if not job.keep_failure:
            raise
        failed = {k: v for k, v in fields.items() if k in TEXTS + ("activity", "kernel_name")}
        return mode.result(dict(failed, entry=None, spec=None, error=exc))
    counts[mode.label] += 1
    result = mode.result(fields)
    if slot is not None:
        slot.save(_stored(result, mode.entry is not None), fields.get("verified", gen.text),
                  getattr(cap, "environments", None))
    return result


def _link(mode, job, cap, name, fields) -> None:
    """Verify, compile (Numba's O3) and make the entry."""
    fields["verified"] = prepare_module(fields["generated"], *mode.link(name))
    fields["library"] = compile_library(fields["verified"], name, cap.environments)
    fields["spec"] = mode.spec(job, cap, name)
    fields["entry"] = mode.entry(fields["spec"], fields["library"])
    with timings.stage("entry"):
        mode.compile(fields["entry"], job, cap, mode.tail)


def _stored(result, linked: bool) -> dict:
    """The fields the disk cache keeps: all but the texts when there is a library to store,
    else (CUDA) the texts too."""
    drop = NOT_STORED + (TEXTS if linked else ())
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)
            if not f.name.startswith("_") and f.name not in drop}
