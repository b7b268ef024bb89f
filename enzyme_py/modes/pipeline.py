"""One build pipeline for every mode.

A mode declares a `ModeSpec`: what it captures, how it names its functions, its transform
(ir_passes' reverse mode, forward mode, or one over the other), the record its entry is made
from and the @njit entry. `build(mode, job)` runs the steps every mode shares:

    disk-cache slot -> capture -> cleanup -> names -> transform -> verify -> link -> entry -> save

and `cached(mode, dispatcher, key, make)` keeps what was built in one table per kernel (dropped
when Numba recompiles the kernel, emptied by `clear_cache`). A new mode is a ModeSpec and the
functions that validate its arguments and call its entry (docs/architecture.md, "a new mode").
"""
from __future__ import annotations

import dataclasses
import threading
import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .. import disk_cache, timings
from ..bridge.convention import build_activity
from ..bridge.entry import compile_entry
from ..bridge.frozen import register
from ..bridge.link import compile_library, prepare_module
from ..bridge.memo import captured, cleaned_text, forget_all

TEXTS = ("captured", "cleaned", "gradient", "generated", "verified")
_NOT_STORED = ("error", "timings")


@dataclass(frozen=True)
class Job:
    """One build. `argtypes`: the kernel's Numba argument types; `kinds`: an Activity per
    argument; `entry_types`: the types of the entry's parameters after the primal arguments
    (shadows, tangents, seeds), which the disk-cache key names; `options`: the mode's own record
    (cache, memory, width, ...). `keep_failure`: a failure after capture is returned in the
    result's `error` (inspect) instead of raised."""
    dispatcher: Any
    argtypes: tuple
    kinds: tuple
    entry_types: tuple
    options: Any
    keep_failure: bool = False


@dataclass(frozen=True)
class Generated:
    """A transform's output: the module text, ir_passes' tape layout, and further fields of
    the result (`gradient`: the reverse gradient forward mode differentiated, ...)."""
    text: str
    layout: Any = None
    extra: dict = field(default_factory=dict)


def capture_host(job: Job):
    """The kernel's module on the Numba CPU target, one capture per overload (bridge/memo.py)."""
    return captured(job.dispatcher, job.argtypes)


def clean_host(job: Job, cap) -> str:
    return cleaned_text(cap)


def activity_host(job: Job, cap) -> tuple:
    """An Activity per LLVM parameter of the captured kernel."""
    return tuple(build_activity(cap.argtypes, cap.restype, job.kinds))


def compile_host(entry, job: Job, cap, tail=()) -> None:
    """Compile the entry for the captured argument types, the job's entry types and `tail`."""
    compile_entry(entry, cap.argtypes + tuple(job.entry_types) + tuple(tail),
                  cap.argtypes != tuple(job.argtypes))


def link_name(name: str) -> tuple:
    """(the function verify keeps external, the other functions it keeps) for symbol `name`."""
    return name, ()


@dataclass(frozen=True)
class ModeSpec:
    """What one mode builds.

    `label`: its name in both caches ("reverse", "forward", ...). `record`: the dataclass of a
    build; it takes the fields of the pipeline it declares (entry, spec, library, layout,
    activity, kernel_name, error, the texts in TEXTS, a transform's extras).
    `names(job, cap, activity)`: its function symbols, the entry's last; `roles`: the disk
    cache's name for each (with the disk cache on, its symbols come from the key; (): the
    mode's own names stay). `stored`: builds go to the disk cache (docs/caching.md).
    `transform(job, cap, cleaned, activity, names)` -> Generated: the AD.
    `spec(job, cap, name)`: the record the entry is made from; `entry(spec, library)`: the
    @njit entry (None: nothing is linked, the generated text is the result, as for CUDA);
    `tail`: the entry's last parameter types, the same for every build (reverse mode's seed).
    `key(job)`: the options the disk-cache key names. The hooks `capture`, `clean`, `activity`,
    `link` and `compile` default to the Numba CPU target's."""
    label: str
    record: type
    names: Callable
    transform: Callable
    key: Callable
    spec: Optional[Callable] = None
    entry: Optional[Callable] = None
    roles: tuple = ()
    stored: bool = True
    tail: tuple = ()
    capture: Callable = capture_host
    clean: Callable = clean_host
    activity: Callable = activity_host
    link: Callable = link_name
    compile: Callable = compile_host

    def result(self, fields: dict):
        """The mode's record from the fields it takes."""
        names = {f.name for f in dataclasses.fields(self.record)}
        return self.record(**{k: v for k, v in fields.items() if k in names})


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
    """Run the pipeline for one job (module docstring); stage timings in the result's
    `timings` (enzyme_py/timings.py)."""
    return _timed(job.dispatcher, mode, job)


@timings.timed_build
def _timed(dispatcher, mode, job):
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
    drop = _NOT_STORED + (TEXTS if linked else ())
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)
            if not f.name.startswith("_") and f.name not in drop}
