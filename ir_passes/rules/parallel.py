"""Parallel-for entry points: a host's launcher that runs an outlined loop body on all threads.

A record says where the launcher's arguments are. Its calling convention is a gufunc's (the
host registers its launcher: enzyme_py/bridge/nrt.py):

    launch(body, char **args, i64 *dims, i64 *steps, void *data, i64 inner_ndim,
           i64 array_count, i64 nthreads)

splits `dims[0]` schedule entries among the threads and calls `body(args', dims', steps, data)`
once per task, with `args'[j] = args[j] + steps[j] * first` (j < array_count) and `dims'` a copy
of `dims[0 .. inner_ndim]` whose first entry is the task's count. `args[0]` is the schedule:
per entry, the inclusive [start, stop] of the loop's index (`steps[0]` bytes); the other
`args[j]` are the data of the loop's arrays and scalars, with `steps[j] == 0`. A body may ask
the runtime for the id of the thread running it (`thread_id`): a reduction keeps its partial
results in an array indexed by it. A body that fails calls one of `raise_calls` (which record
the error with the host) and returns; the launcher and the other tasks go on, and the caller
reports the error after its return: a gradient whose launch failed returns `error_status`.

Reverse mode runs the body's augmented forward sweep and its reverse sweep through the same
launcher (transforms/reverse/parallel/parallel_launch.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

PARALLEL: dict = {}     # launcher name -> its record


class ParallelUpdates(str, Enum):
    """How a parallel loop's reverse sweep adds into shadows that several iterations update
    (transforms/reverse/parallel/parallel_private.py)."""
    AUTO = "auto"                    # per-task copies of read-only arrays' shadows, else atomic
    ATOMIC = "atomic"                # atomic adds
    DETERMINISTIC = "deterministic"  # per-task copies summed in order; refuse atomic adds


@dataclass(frozen=True)
class ParallelFor:
    """A launcher; the fields are argument indices, `thread_id` the runtime's thread id
    function (`i64 ()`), `raise_calls` the functions only a failing body calls, `error_status` the
    status a function returns when an error is recorded."""
    name: str
    thread_id: str
    raise_calls: tuple = ()
    error_status: int = -1
    schedulers: tuple = ()   # `f(ndim, i64 *starts, i64 *stops, nsched, sched, ...)` fill args[0]
    handles: tuple = ()      # functions whose results are one launch's own (its schedule's
    #                          memory, the saved thread state), made again by every launch
    body: int = 0
    args: int = 1
    dims: int = 2
    steps: int = 3
    data: int = 4
    inner_ndim: int = 5
    array_count: int = 6
    threads: int = 7


def register_parallel_for(name: str, thread_id: str, raise_calls=(), error_status: int = -1,
                          schedulers=(), handles=()) -> ParallelFor:
    """Register the launcher `name` (gufunc convention, see the module docstring);
    `schedulers`: the functions that fill a schedule from the loop's start and stop;
    `handles`: the functions whose results belong to one launch (a checkpointed time loop's
    step makes them itself: transforms/reverse/loops/checkpoint/step_local.py)."""
    PARALLEL[name] = ParallelFor(name, thread_id, tuple(raise_calls), error_status,
                                 tuple(schedulers), handles=tuple(handles))
    return PARALLEL[name]


THREAD_IDS: dict = {}      # launcher name -> other names of calls to its thread id function


def register_thread_id(launcher: str, callee: str) -> None:
    """Calls named `callee` (a call through a pointer loaded from global @callee, how a JIT host
    calls a C function pointer: Instruction.callee_name) also ask `launcher`'s runtime for the
    running thread's id; they may return a narrower integer."""
    THREAD_IDS.setdefault(launcher, set()).add(callee)


def thread_ids(rec) -> frozenset:
    """The names of calls to launcher `rec`'s thread id function."""
    return frozenset({rec.thread_id} | THREAD_IDS.get(rec.name, set()))


def lookup_parallel(name: str | None):
    """The record of launcher `name`, or None."""
    return PARALLEL.get(name) if name else None


def launch_handle(name: str | None) -> bool:
    """Does `name` return an object that belongs to one launch (ParallelFor.handles)?"""
    return bool(name) and any(name in p.handles for p in PARALLEL.values())


def passed_pointers(call, instructions) -> list:
    """The pointers a launch passes to its body: those stored into its `args` array (a body
    may write differentiable data into any of them)."""
    args = call.ops[lookup_parallel(call.callee_name).args]
    out = []
    for i in instructions:
        if i.opcode == "store" and i.ops[0].type.is_ptr and \
                (i.ops[1] is args or getattr(i.ops[1], "opcode", "") == "getelementptr"
                 and i.ops[1].ops[0] is args):
            out.append(i.ops[0])
    return out
