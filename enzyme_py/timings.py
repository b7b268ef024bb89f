"""Per-stage compile timings of a gradient build (a debug facility, docs/performance.md).

`record()` collects, for the build running in this thread, the seconds spent in each stage
timed with `stage(name)` (a context manager, or a decorator). Nested records are separate;
stages outside any record cost one thread-local lookup. With ENZYME_PY_TIMINGS=1 in the
environment, `print_table` writes each finished build's table to stderr; with
ENZYME_PY_TIMINGS=cpu the stages are measured in CPU seconds of the process
(`time.process_time`) instead of wall seconds, which is steadier on a loaded machine.

Stages, in pipeline order (docs/pipeline.md): capture (type and lower the private copy,
link the module texts), cleanup (parse, O2, print), parse / AD / print (ir_passes),
verify (prepare_module: parse, verify, print), O3 + codegen (Numba's codegen on the
gradient module), runtime (the shared runtime helpers the process lacked: bridge/runtime.py),
entry (Numba compiles the @njit entry), total (the whole build).
"""
import gc
import os
import sys
import threading
import time
from contextlib import contextmanager
from functools import wraps

_local = threading.local()


def enabled() -> bool:
    """Whether ENZYME_PY_TIMINGS asks for the table of every build."""
    return os.environ.get("ENZYME_PY_TIMINGS", "") not in ("", "0")


def _clock():
    return time.process_time if os.environ.get("ENZYME_PY_TIMINGS") == "cpu" \
        else time.perf_counter


@contextmanager
def record():
    """Collect the stages timed in this thread into the yielded dict (seconds; `total` last)."""
    table = {}
    outer = (getattr(_local, "table", None), getattr(_local, "clock", None))
    _local.table, _local.clock = table, _clock()
    start = _local.clock()
    try:
        yield table
    finally:
        table["total"] = _local.clock() - start
        _local.table, _local.clock = outer


class stage:
    """`with stage("O3 + codegen"): ...` or `@stage("capture")`: add the elapsed seconds to
    the current record's entry `name` (nothing when no record is open)."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self._table = getattr(_local, "table", None)
        if self._table is not None:
            self._clock = _local.clock
            self._start = self._clock()
        return self

    def __exit__(self, *exc):
        if self._table is not None:
            table = self._table
            table[self.name] = table.get(self.name, 0.0) + self._clock() - self._start
        return False

    def __call__(self, fn):
        name = self.name

        @wraps(fn)
        def timed(*args, **kwargs):
            with stage(name):
                return fn(*args, **kwargs)
        return timed


def format_table(table, label="") -> str:
    """The stages of one build as aligned lines: name, seconds, share of the total."""
    total = table.get("total") or sum(table.values()) or 1.0
    lines = [f"enzyme_py timings{': ' + label if label else ''}"]
    rest = total
    for name, secs in table.items():
        if name == "total":
            continue
        rest -= secs
        lines.append(f"  {name:<14} {secs:8.3f} s {100 * secs / total:5.1f} %")
    lines.append(f"  {'other':<14} {max(rest, 0.0):8.3f} s {100 * max(rest, 0.0) / total:5.1f} %")
    lines.append(f"  {'total':<14} {total:8.3f} s")
    return "\n".join(lines)


def print_table(table, label="") -> None:
    """Write the table to stderr when ENZYME_PY_TIMINGS is set."""
    if enabled():
        print(format_table(table, label), file=sys.stderr, flush=True)


@contextmanager
def gc_paused():
    """Hold Python's cyclic garbage collector off for the duration (the outermost one re-enables
    it). A build allocates a few hundred thousand objects (Numba's IR, ir_passes' model), which
    set off full collections that walk the whole heap: 5-10 % of a build, more in a process
    holding many gradients. Its garbage is collected after the build."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def timed_build(build):
    """Decorate a build function `build(dispatcher, ...)` -> CompiledGradient: record its
    stages, print them (ENZYME_PY_TIMINGS=1) and keep them in the result's `timings`."""
    @wraps(build)
    def run(dispatcher, *args, **kwargs):
        with record() as table, gc_paused():
            grad = build(dispatcher, *args, **kwargs)
        func = getattr(dispatcher, "py_func", dispatcher)
        print_table(table, getattr(func, "__qualname__", ""))
        try:
            object.__setattr__(grad, "timings", dict(table))
        except (AttributeError, TypeError):
            pass
        return grad
    return run
