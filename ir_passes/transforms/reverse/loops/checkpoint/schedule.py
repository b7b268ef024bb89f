"""The checkpoint schedule: runtime helpers in LLVM IR (runtime/checkpoint_schedule.ll), added to a
module on demand.

A schedule is a stack of snapshots, sorted by the step whose input state each holds; the frame
keeps it (fields of 8 bytes):

    0 buf   snapshots, `cap` slots of S bytes       32 n     steps the loop ran
    8 pos   the step of each snapshot               40 S     bytes of one snapshot
    16 top  snapshots held                          48 cap   slots allocated (grown to c)
    24 c    slots the budget allows (see below)     56 d     the forward's snapshot stride
    64 recomputed  steps run again in the reverse   72 peak  most snapshots held at once
    80 lim  snapshots the forward may hold (c, then c / 2 once it had to thin)
    88 trips  a bound on the steps, known on entry (0: unknown)
    96 aim    the step the forward snapshots next when `trips` is known (-1: none)

The budget holds c snapshots, the copy of the final state the reverse puts back at its end,
and one step's own tape, counted as one state: c = budget / S - 2, but at least 2 (a budget
under four states is exceeded).

Forward with a known bound on the steps (a counted loop; `trips`): Revolve's own placement
from the start: a snapshot at step 0, then at the binomial split point of the steps left with
the slots left, and so on while slots are free (`aim`).

Forward otherwise (online, the trip count need not be known): keep the state before every d-th step;
when `lim` snapshots are held, double d and drop the snapshots that are not multiples of it.
Once it has thinned, the forward keeps at most half the slots, so that the reverse has the
other half for its binomial placements.
The frame and its snapshot memory are parked in a pool (a global, swapped atomically) when
the reverse ends, and the next call takes them back: a repeat call allocates nothing.

Reverse, for t = n-1 .. 0: drop the snapshots after t, restore the latest, and run forward to
t, placing a snapshot at the binomial split point (Griewank's Revolve) while slots are free;
then reverse step t. The split of l steps from a held snapshot with f free slots is Revolve's
for s = f + 1 snapshots (the held one counts): the first l - beta(s - 1, r) steps stay left,
with r the fewest repetitions such that beta(s, r) = C(s + r, s) >= l. With c slots and n <= c
every state is kept and nothing is recomputed.
"""
from __future__ import annotations

from .....ir.parser import parse_module
from .....ir import types as T
from .....ir.builder import Builder
from .....ir.values import ConstInt
from .....rules.convention import error_report
from .....runtime.helpers import HELPERS, ensure, rewrite
from .....runtime.source import load

FRAME_BYTES = 104
FIELDS = {"buf": 0, "pos": 8, "top": 16, "c": 24, "n": 32, "S": 40, "cap": 48, "d": 56,
          "recomputed": 64, "peak": 72, "lim": 80, "trips": 88, "aim": 96}

# the frame swapped with the pool: kept between calls (an atomic exchange), or fresh per call
POOLED = {"TAKE": "atomicrmw xchg ptr %pool, ptr null acq_rel, align 8",
          "PUT": "atomicrmw xchg ptr %pool, ptr %f acq_rel, align 8"}
SCHEDULE = load("checkpoint_schedule", **POOLED)

# A step run again in the reverse sweep that leaves the loop another way than it did in the
# forward (its allocation failed, say) cannot give the gradient. With a host's error report
# (rules/convention.py) `enzpy.ckpt.fail` records the error with the host (for this thread):
# the reverse of the loop stops, and the gradient returns the report's status when the host
# has an error recorded at its end (checkpoint_status). Without one it says so on stderr and
# aborts.
MESSAGE = ("enzyme_py: a step of a checkpointed time loop took another exit when it ran again "
           "in the reverse sweep (did an allocation fail?); the gradient cannot be completed")


def _fail_function(text: str) -> str:
    """`enzpy.ckpt.fail`: report `text` to the host and set the flag; or write it to stderr (from
    words stored on the stack) and abort."""
    report = error_report()
    if report is not None:
        data = text.encode() + b"\0"
        return load("checkpoint_fail", LENGTH=len(data), BYTES="".join(f"\\{c:02X}" for c in data),
                    REPORT=report[0])
    text += "\n"
    data = text.encode() + b"\0" * (-len(text.encode()) % 8)
    words = [int.from_bytes(data[k:k + 8], "little", signed=True) for k in range(0, len(data), 8)]
    return load("checkpoint_abort", COUNT=len(words), WORDS=", ".join(f"i64 {w}" for w in words),
                WRITTEN=len(text.encode()))


def _ensure_fail(module) -> None:
    if "enzpy.ckpt.fail" in module.functions and not module.functions["enzpy.ckpt.fail"].is_declaration:
        return
    text = _fail_function(MESSAGE)
    if error_report() is not None and error_report()[0] in HELPERS:
        text += HELPERS[error_report()[0]]
    parsed = parse_module(rewrite(module, text))
    have = {x.split(" ", 1)[0] for x in module.items if isinstance(x, str) and x.startswith("@")}
    for item in parsed.items:     # the message, and globals the host's helper declares
        if isinstance(item, str) and item.startswith("@") and item.split(" ", 1)[0] not in have:
            module.items.append(item)
    for fn in parsed.functions.values():
        if fn.name == "enzpy.ckpt.fail" or fn.name not in module.functions or \
                module.functions[fn.name].is_declaration and not fn.is_declaration:
            fn.generated = True
            module.add_function(fn)


def checkpoint_status(g, ret) -> None:
    """Before the kernel gradient's last return `ret`: return the report's status when the host
    has an error recorded (a checkpointed loop's reverse stopped: enzpy.ckpt.fail)."""
    report = error_report()
    if report is None or not ret.ops:
        return
    _ensure_fail(g.module)
    status = ret.ops[0]
    blk = ret.block
    at = blk.instructions.index(ret)
    tail = blk.instructions[at:]
    blk.instructions = blk.instructions[:at]
    b = Builder(g.module, blk)
    bad = b.call(report[2], T.i1, [])
    chosen = b.select(bad, ConstInt(status.type, report[1]), status)
    blk.instructions += tail
    ret.ops = [chosen]


def forward_failure(g, b) -> None:
    """After a checkpointed loop's forward (`b` right after its aug call) whose steps launch
    parallel loops: the plain steps run the host's launches, which leave a body's exception
    recorded and go on. The gradient's failure flag (parallel_launch's, checked at the forward
    sweep's returns) |= the host's pending error, so the gradient returns the error status
    before its reverse sweep runs, as when a taped launch fails."""
    report = error_report()
    if report is None or not isinstance(g.primal.ret_type, T.IntType):
        return
    _ensure_fail(g.module)
    if g.parallel_failed is None:
        g.parallel_failed = (g.tape.new_field(T.i64, ConstInt(T.i64, 0)), report[1])
    field = g.parallel_failed[0]
    bad = b.cast("zext", b.call(report[2], T.i1, []), T.i64)
    g.tape.store(b, b.binop("or", g.tape.load(b, field), bad), field)

NAMES = ("frame", "trips", "aim", "get", "set", "add", "push", "thin", "wants", "latest", "latest_step", "split",
         "next", "release", "drop")
for _name in NAMES:
    HELPERS["enzpy.ckpt." + _name] = SCHEDULE


# Forward mode over a checkpointed gradient (Hessian-vector products) needs the frames in
# ordinary memory, not parked in a pool between calls: the frame is always fresh and release
# frees it (LLVM folds the selects away).
UNPOOLED = load("checkpoint_schedule", TAKE="select i1 true, ptr null, ptr %pool",
                PUT="select i1 true, ptr %f, ptr %pool")


def unpooled(module) -> None:
    """Make the module's checkpoint frames fresh per call (UNPOOLED), when it has any."""
    if "enzpy.ckpt.frame" not in module.functions:
        return
    for fn in parse_module(UNPOOLED).functions.values():
        if fn.name in ("enzpy.ckpt.frame", "enzpy.ckpt.release"):
            fn.generated = True
            module.add_function(fn)


def ensure_schedule(module) -> None:
    """Add the schedule's helpers to the module (once)."""
    ensure(module, "enzpy.ckpt.frame")
    _ensure_fail(module)
