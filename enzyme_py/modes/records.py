"""The records of modes/pipeline.py: what a mode declares (`ModeSpec`), one build's input
(`Job`), a mode's reading of a call (`Prepared`) and a transform's output (`Generated`), with the
default hooks of the Numba CPU target. Data only: the pipeline's functions call into the modes,
the modes build these records, and neither is entered twice on a call's path.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ir_passes import Activity

from ..bridge.convention import build_activity
from ..bridge.entry import compile_entry
from ..bridge.memo import captured, cleaned_text

TEXTS = ("captured", "cleaned", "gradient", "generated", "verified")
NOT_STORED = ("error", "timings")


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


@dataclass(frozen=True)
class Prepared:
    """A mode's reading of one call (its `prepare`): the kernel's dispatcher, the cache key,
    `job()` the Job to build on a miss (typing the arguments costs: only then), and `args`, what
    the mode's `call` needs besides the result (the annotations, the shadows, ...)."""
    dispatcher: Any
    key: Any
    job: Callable[[], Job]
    args: Any = None


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
    `link` and `compile` default to the Numba CPU target's.
    `prepare(kernel, args, **options)` -> Prepared: validates a call; `call(result, prepared,
    guarded, *extra)`: calls the entry (`guarded()`: the result built with guarded=True, for
    strong_zero.py's rerun). `fallback(job, exc)`: the Job to build instead when building `job`
    raised `exc` (None: raise it)."""
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
    prepare: Optional[Callable] = None
    call: Optional[Callable] = None
    fallback: Optional[Callable] = None

    def result(self, fields: dict):
        """The mode's record from the fields it takes."""
        names = {f.name for f in dataclasses.fields(self.record)}
        return self.record(**{k: v for k, v in fields.items() if k in names})


@dataclass(frozen=True)
class KindPositions:
    """What the frozen call specs (GradientSpec, ForwardSpec) share: the kernel's Numba signature
    (`argtypes`, `restype`), its `kinds` as Activities (strings are converted), and the argument
    positions of each kind, `dup_positions` and `active_positions` (derived)."""
    argtypes: tuple
    restype: Any
    kinds: tuple
    dup_positions: tuple = field(init=False)
    active_positions: tuple = field(init=False)

    def __post_init__(self):
        kinds = tuple(Activity(k) for k in self.kinds)
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "dup_positions",
                           tuple(i for i, k in enumerate(kinds) if k is Activity.DUP))
        object.__setattr__(self, "active_positions",
                           tuple(i for i, k in enumerate(kinds) if k is Activity.ACTIVE))


@dataclass(frozen=True)
class Compiled:
    """What every mode's build returns: `entry` (the compiled function), `spec` (how to call
    it), `activity` (the per-LLVM-parameter list given to ir_passes), the kernel's name, and
    for debugging the texts `captured` (the linked, unoptimized module), `cleaned` (after
    inlining and O2: the input of ir_passes), `generated` (ir_passes' output), `verified` (what
    Numba compiled). Only `inspect` returns a failed build: then `error` is the exception,
    `entry` and `spec` are None, and the texts stop at the failing stage."""
    entry: Any
    spec: Any
    activity: tuple
    kernel_name: str
    captured: str = ""
    cleaned: str = ""
    generated: str = ""
    verified: str = ""
    error: Optional[BaseException] = None
