"""The checkpoint schedule, as runtime helpers in LLVM IR (added to a module on demand).

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

from ....ir.parser import parse_module
from ....ir import types as T
from ....ir.builder import Builder
from ....ir.values import ConstInt
from ....rules.convention import error_report
from ....runtime.helpers import HELPERS, ensure, rewrite

FRAME_BYTES = 104
FIELDS = {"buf": 0, "pos": 8, "top": 16, "c": 24, "n": 32, "S": 40, "cap": 48, "d": 56,
          "recomputed": 64, "peak": 72, "lim": 80, "trips": 88, "aim": 96}

SCHEDULE = """
define internal ptr @enzpy.ckpt.frame(i64 %S, i64 %budget, ptr %pool) {
entry:
  %tiny = icmp ult i64 %S, 1
  %S1 = select i1 %tiny, i64 1, i64 %S
  %q = udiv i64 %budget, %S1
  %c0 = sub i64 %q, 2
  %few = icmp slt i64 %c0, 2
  %c = select i1 %few, i64 2, i64 %c0
  %parked = atomicrmw xchg ptr %pool, ptr null acq_rel, align 8
  %none = icmp eq ptr %parked, null
  br i1 %none, label %fresh, label %reuse
fresh:
  %new = call ptr @malloc(i64 104)
  call void @llvm.memset.p0.i64(ptr %new, i8 0, i64 104, i1 false)
  br label %init
reuse:
  %oldcap = call i64 @enzpy.ckpt.get(ptr %parked, i64 48)
  %oldS = call i64 @enzpy.ckpt.get(ptr %parked, i64 40)
  %bytes = mul i64 %oldcap, %oldS
  %fit = udiv i64 %bytes, %S1
  %less = icmp ult i64 %fit, %oldcap
  %cap0 = select i1 %less, i64 %fit, i64 %oldcap
  %over = icmp ugt i64 %cap0, %c
  %cap = select i1 %over, i64 %c, i64 %cap0
  call void @enzpy.ckpt.set(ptr %parked, i64 48, i64 %cap)
  br label %init
init:
  %f = phi ptr [ %new, %fresh ], [ %parked, %reuse ]
  call void @enzpy.ckpt.set(ptr %f, i64 16, i64 0)
  call void @enzpy.ckpt.set(ptr %f, i64 24, i64 %c)
  call void @enzpy.ckpt.set(ptr %f, i64 32, i64 0)
  call void @enzpy.ckpt.set(ptr %f, i64 40, i64 %S1)
  call void @enzpy.ckpt.set(ptr %f, i64 56, i64 1)
  call void @enzpy.ckpt.set(ptr %f, i64 64, i64 0)
  call void @enzpy.ckpt.set(ptr %f, i64 72, i64 0)
  call void @enzpy.ckpt.set(ptr %f, i64 80, i64 %c)
  call void @enzpy.ckpt.set(ptr %f, i64 88, i64 0)
  call void @enzpy.ckpt.set(ptr %f, i64 96, i64 0)
  ret ptr %f
}

define internal void @enzpy.ckpt.trips(ptr %f, i64 %n) {
entry:
  %known = icmp sgt i64 %n, 0
  %v = select i1 %known, i64 %n, i64 0
  call void @enzpy.ckpt.set(ptr %f, i64 88, i64 %v)
  ret void
}

define internal void @enzpy.ckpt.aim(ptr %f, i64 %k) {
entry:
  %n = call i64 @enzpy.ckpt.get(ptr %f, i64 88)
  %known = icmp sgt i64 %n, 0
  br i1 %known, label %plan, label %done
plan:
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %c = call i64 @enzpy.ckpt.get(ptr %f, i64 24)
  %full = icmp sge i64 %top, %c
  %end = sub i64 %n, 1
  %past = icmp sge i64 %k, %end
  %stop = or i1 %full, %past
  br i1 %stop, label %none, label %next
next:
  %m = call i64 @enzpy.ckpt.next(ptr %f, i64 %k, i64 %end)
  call void @enzpy.ckpt.set(ptr %f, i64 96, i64 %m)
  br label %done
none:
  call void @enzpy.ckpt.set(ptr %f, i64 96, i64 -1)
  br label %done
done:
  ret void
}

define internal i64 @enzpy.ckpt.get(ptr %f, i64 %field) {
entry:
  %p = getelementptr i8, ptr %f, i64 %field
  %v = load i64, ptr %p
  ret i64 %v
}

define internal void @enzpy.ckpt.set(ptr %f, i64 %field, i64 %v) {
entry:
  %p = getelementptr i8, ptr %f, i64 %field
  store i64 %v, ptr %p
  ret void
}

define internal void @enzpy.ckpt.add(ptr %f, i64 %field, i64 %v) {
entry:
  %p = getelementptr i8, ptr %f, i64 %field
  %old = load i64, ptr %p
  %new = add i64 %old, %v
  store i64 %new, ptr %p
  ret void
}

define internal ptr @enzpy.ckpt.push(ptr %f, i64 %k) {
entry:
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %cap = call i64 @enzpy.ckpt.get(ptr %f, i64 48)
  %S = call i64 @enzpy.ckpt.get(ptr %f, i64 40)
  %pbuf = getelementptr i8, ptr %f, i64 0
  %ppos = getelementptr i8, ptr %f, i64 8
  %full = icmp uge i64 %top, %cap
  br i1 %full, label %grow, label %put
grow:
  %c = call i64 @enzpy.ckpt.get(ptr %f, i64 24)
  %dbl = shl i64 %cap, 1
  %zero = icmp eq i64 %cap, 0
  %want = select i1 %zero, i64 4, i64 %dbl
  %over = icmp ugt i64 %want, %c
  %ncap = select i1 %over, i64 %c, i64 %want
  %bytes = mul i64 %ncap, %S
  %nbuf = call ptr @malloc(i64 %bytes)
  %obuf = load ptr, ptr %pbuf
  %used = mul i64 %top, %S
  call void @llvm.memcpy.p0.p0.i64(ptr %nbuf, ptr %obuf, i64 %used, i1 false)
  call void @free(ptr %obuf)
  store ptr %nbuf, ptr %pbuf
  %pbytes = mul i64 %ncap, 8
  %npos = call ptr @malloc(i64 %pbytes)
  %opos = load ptr, ptr %ppos
  %pused = mul i64 %top, 8
  call void @llvm.memcpy.p0.p0.i64(ptr %npos, ptr %opos, i64 %pused, i1 false)
  call void @free(ptr %opos)
  store ptr %npos, ptr %ppos
  call void @enzpy.ckpt.set(ptr %f, i64 48, i64 %ncap)
  br label %put
put:
  %pos = load ptr, ptr %ppos
  %pk = getelementptr i64, ptr %pos, i64 %top
  store i64 %k, ptr %pk
  %buf = load ptr, ptr %pbuf
  %off = mul i64 %top, %S
  %slot = getelementptr i8, ptr %buf, i64 %off
  %top1 = add i64 %top, 1
  call void @enzpy.ckpt.set(ptr %f, i64 16, i64 %top1)
  %peak = call i64 @enzpy.ckpt.get(ptr %f, i64 72)
  %higher = icmp ugt i64 %top1, %peak
  %npeak = select i1 %higher, i64 %top1, i64 %peak
  call void @enzpy.ckpt.set(ptr %f, i64 72, i64 %npeak)
  ret ptr %slot
}

define internal void @enzpy.ckpt.thin(ptr %f) {
entry:
  %c = call i64 @enzpy.ckpt.get(ptr %f, i64 24)
  %half = lshr i64 %c, 1
  %tiny = icmp ult i64 %half, 2
  %lim = select i1 %tiny, i64 2, i64 %half
  call void @enzpy.ckpt.set(ptr %f, i64 80, i64 %lim)
  %d = call i64 @enzpy.ckpt.get(ptr %f, i64 56)
  %d2 = shl i64 %d, 1
  call void @enzpy.ckpt.set(ptr %f, i64 56, i64 %d2)
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %S = call i64 @enzpy.ckpt.get(ptr %f, i64 40)
  %pbuf = getelementptr i8, ptr %f, i64 0
  %buf = load ptr, ptr %pbuf
  %ppos = getelementptr i8, ptr %f, i64 8
  %pos = load ptr, ptr %ppos
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %j = phi i64 [ 0, %entry ], [ %j2, %next ]
  %more = icmp ult i64 %i, %top
  br i1 %more, label %body, label %done
body:
  %pi = getelementptr i64, ptr %pos, i64 %i
  %at = load i64, ptr %pi
  %r = urem i64 %at, %d2
  %keep = icmp eq i64 %r, 0
  br i1 %keep, label %move, label %next
move:
  %pj = getelementptr i64, ptr %pos, i64 %j
  store i64 %at, ptr %pj
  %soff = mul i64 %i, %S
  %src = getelementptr i8, ptr %buf, i64 %soff
  %doff = mul i64 %j, %S
  %dst = getelementptr i8, ptr %buf, i64 %doff
  %same = icmp eq i64 %i, %j
  br i1 %same, label %moved, label %copy
copy:
  call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %src, i64 %S, i1 false)
  br label %moved
moved:
  %j1 = add i64 %j, 1
  br label %next
next:
  %j2 = phi i64 [ %j1, %moved ], [ %j, %body ]
  %i1 = add i64 %i, 1
  br label %loop
done:
  call void @enzpy.ckpt.set(ptr %f, i64 16, i64 %j)
  ret void
}

define internal i1 @enzpy.ckpt.wants(ptr %f, i64 %k) {
entry:
  %n = call i64 @enzpy.ckpt.get(ptr %f, i64 88)
  %known = icmp sgt i64 %n, 0
  br i1 %known, label %aimed, label %online
aimed:
  %aim = call i64 @enzpy.ckpt.get(ptr %f, i64 96)
  %at = icmp eq i64 %k, %aim
  ret i1 %at
online:
  %d = call i64 @enzpy.ckpt.get(ptr %f, i64 56)
  %r = urem i64 %k, %d
  %on = icmp eq i64 %r, 0
  br i1 %on, label %check, label %no
check:
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %lim = call i64 @enzpy.ckpt.get(ptr %f, i64 80)
  %full = icmp uge i64 %top, %lim
  br i1 %full, label %thin, label %yes
thin:
  call void @enzpy.ckpt.thin(ptr %f)
  %d2 = call i64 @enzpy.ckpt.get(ptr %f, i64 56)
  %r2 = urem i64 %k, %d2
  %on2 = icmp eq i64 %r2, 0
  br i1 %on2, label %check, label %no
yes:
  ret i1 true
no:
  ret i1 false
}

define internal ptr @enzpy.ckpt.latest(ptr %f, i64 %t) {
entry:
  %ppos = getelementptr i8, ptr %f, i64 8
  %pos = load ptr, ptr %ppos
  br label %loop
loop:
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %last = sub i64 %top, 1
  %pl = getelementptr i64, ptr %pos, i64 %last
  %at = load i64, ptr %pl
  %after = icmp sgt i64 %at, %t
  br i1 %after, label %pop, label %found
pop:
  call void @enzpy.ckpt.set(ptr %f, i64 16, i64 %last)
  br label %loop
found:
  %S = call i64 @enzpy.ckpt.get(ptr %f, i64 40)
  %pbuf = getelementptr i8, ptr %f, i64 0
  %buf = load ptr, ptr %pbuf
  %off = mul i64 %last, %S
  %slot = getelementptr i8, ptr %buf, i64 %off
  ret ptr %slot
}

define internal i64 @enzpy.ckpt.latest_step(ptr %f) {
entry:
  %ppos = getelementptr i8, ptr %f, i64 8
  %pos = load ptr, ptr %ppos
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %last = sub i64 %top, 1
  %pl = getelementptr i64, ptr %pos, i64 %last
  %at = load i64, ptr %pl
  ret i64 %at
}

define internal i64 @enzpy.ckpt.split(i64 %l, i64 %s) {
entry:
  br label %grow
grow:
  %r = phi i64 [ 0, %entry ], [ %r1, %more ]
  %beta = phi i64 [ 1, %entry ], [ %beta1, %more ]
  %prev = phi i64 [ 0, %entry ], [ %beta, %more ]
  %enough = icmp sge i64 %beta, %l
  br i1 %enough, label %done, label %more
more:
  %r1 = add i64 %r, 1
  %sr = add i64 %s, %r1
  %t = mul i64 %beta, %sr
  %beta1 = udiv i64 %t, %r1
  br label %grow
done:
  %right = sub i64 %beta, %prev
  %m0 = sub i64 %l, %right
  %low = icmp slt i64 %m0, 1
  %m1 = select i1 %low, i64 1, i64 %m0
  %lm1 = sub i64 %l, 1
  %high = icmp sgt i64 %m1, %lm1
  %m = select i1 %high, i64 %lm1, i64 %m1
  ret i64 %m
}

define internal i64 @enzpy.ckpt.next(ptr %f, i64 %p, i64 %t) {
entry:
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %c = call i64 @enzpy.ckpt.get(ptr %f, i64 24)
  %free = sub i64 %c, %top
  %t1 = add i64 %t, 1
  %l = sub i64 %t1, %p
  %none = icmp sle i64 %free, 0
  br i1 %none, label %all, label %split
all:
  ret i64 %t
split:
  %held = add i64 %free, 1
  %over = icmp sgt i64 %held, %l
  %s = select i1 %over, i64 %l, i64 %held
  %m = call i64 @enzpy.ckpt.split(i64 %l, i64 %s)
  %at = add i64 %p, %m
  ret i64 %at
}

define internal void @enzpy.ckpt.release(ptr %f, ptr %pool) {
entry:
  %old = atomicrmw xchg ptr %pool, ptr %f acq_rel, align 8
  %none = icmp eq ptr %old, null
  br i1 %none, label %done, label %drop
drop:
  call void @enzpy.ckpt.drop(ptr %old)
  br label %done
done:
  ret void
}

define internal void @enzpy.ckpt.drop(ptr %f) {
entry:
  %pbuf = getelementptr i8, ptr %f, i64 0
  %buf = load ptr, ptr %pbuf
  call void @free(ptr %buf)
  %ppos = getelementptr i8, ptr %f, i64 8
  %pos = load ptr, ptr %ppos
  call void @free(ptr %pos)
  call void @free(ptr %f)
  ret void
}

declare void @enzpy.ckpt.fail()
declare ptr @malloc(i64)
declare void @free(ptr)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
"""

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
        body = "".join(f"\\{c:02X}" for c in data)
        return (f'@enzpy.ckpt.message = private unnamed_addr constant [{len(data)} x i8] c"{body}"\n'
                f"define internal void @enzpy.ckpt.fail() {{\nentry:\n"
                f"  call void @{report[0]}(ptr @enzpy.ckpt.message)\n  ret void\n}}\n"
                f"declare void @{report[0]}(ptr)\n")
    text += "\n"
    data = text.encode() + b"\0" * (-len(text.encode()) % 8)
    words = [int.from_bytes(data[k:k + 8], "little", signed=True) for k in range(0, len(data), 8)]
    n = len(words)
    body = ", ".join(f"i64 {w}" for w in words)
    return (f"define internal void @enzpy.ckpt.fail() {{\nentry:\n"
            f"  %m = alloca [{n} x i64], align 8\n"
            f"  store [{n} x i64] [{body}], ptr %m\n"
            f"  %w = call i64 @write(i32 2, ptr %m, i64 {len(text.encode())})\n"
            f"  call void @abort()\n  unreachable\n}}\n"
            f"declare i64 @write(i32, ptr, i64)\ndeclare void @abort()\n")


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
UNPOOLED = SCHEDULE.replace("atomicrmw xchg ptr %pool, ptr null acq_rel, align 8",
                            "select i1 true, ptr null, ptr %pool") \
    .replace("atomicrmw xchg ptr %pool, ptr %f acq_rel, align 8", "select i1 true, ptr %f, ptr %pool")


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
