"""`explain`: what a gradient caches, why, and how many bytes its tape takes for given arguments
(and its arena: the inputs of BLAS/LAPACK calls copied for the reverse sweep, each with its bytes)."""
from __future__ import annotations

import ctypes
import linecache
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import llvmlite.binding as llvm

from . import disk_cache
from .annotations import Duplicated, DuplicatedNoNeed, as_annotation
from .arguments import copy_value, is_cuda
from .api import inspect
from .modes import strong_zero
from .modes.split import Tape
from ir_passes import MEMORY_CHOICES as WHY
from .bridge.cleanup import variable_names
from .options import kernel_options

NUMBA_DIR = os.sep + "numba" + os.sep


@dataclass
class Cached:
    """One value the reverse sweep reads from the tape.

    `variable`: the Python variable holding it, when the debug info names one; `code`: the text
    of its source line; `instruction`: the LLVM instruction (or what a control entry records)."""
    instruction: str
    source: str          # "file:line" in the user's code, or "" when unknown
    reason: str
    bytes_per_iteration: int
    loop: int | None     # None: stored once per call (a register after optimization)
    variable: str = ""
    code: str = ""
    arena_bytes: int | None = None   # a copy in the arena: its bytes in this call (all iterations)

    def __str__(self) -> str:
        per = f"{self.bytes_per_iteration} B per iteration of loop {self.loop}" if self.loop is not None \
            else f"{self.bytes_per_iteration} B once"
        if self.arena_bytes is not None:
            per = f"{self.arena_bytes} B copied into the arena in this call (its offset: {per})"
        head = f"{self.source}: {self.code}" if self.code else (self.source or "(no source line)")
        what = self.instruction.strip()
        if self.variable:
            what = f"`{self.variable}` ({what})"
        elif what.startswith("%"):
            what = f"a value computed on this line ({what})"
        return f"{head}\n      {what}\n      cached because {self.reason}; {per}"


@dataclass
class Checkpointed:
    """A time loop reversed from snapshots (docs/checkpointing.md), as the last call ran it."""
    source: str              # "file:line" of the loop
    steps: int               # steps the loop ran (segments of `segment` iterations each)
    snapshot_bytes: int      # one snapshot: the arrays the body writes, and its counters
    snapshots: int           # the most snapshots held at once
    slots: int               # snapshots the budget allows
    budget: int
    recomputed: int          # steps run again in the reverse sweep
    full_tape: bool = False  # memory="auto" kept the full tape: its estimate fit the budget
    tape_bytes: int = 0      # with full_tape: the gradient's tape in this call (all its loops)
    segment: int = 1         # loop iterations per step: a segment whose tape fits a quarter
    #                          of the last-level cache (`cache` bytes) and half the budget
    cache: int = 0
    why: str = ""            # memory="auto"'s reason (version.WHY), for a loop it chose on entry
    recompute_ps: int = 0    # the model's picoseconds per tape byte: a step run again,
    traffic_ps: int = 0      # and the tape's traffic the reverse sweep does not hide

    @property
    def recomputation(self) -> float:
        """Forward runs of a step per step: 1 + recomputed / steps (the taped run not counted)."""
        return 1.0 + self.recomputed / self.steps if self.steps else 1.0

    @property
    def reason(self) -> str:
        """memory="auto"'s choice and why, with the numbers (docs/checkpointing.md)."""
        per_step = self.snapshot_bytes
        model = (f"estimated per step of {per_step} B of tape: recomputation "
                 f"{self.recompute_ps * per_step / 1e6:.3g} us, the tape's traffic not hidden by "
                 f"the reverse sweep {self.traffic_ps * per_step / 1e6:.3g} us")
        cache = f"half the {self.cache} B last-level cache"
        return {"fits the cache": f"the full tape's estimate fits {cache}",
                "recomputation costs more": f"the full tape's estimate exceeds {cache}, but "
                                            f"recomputation costs more than the traffic it saves ({model})",
                "recomputation is cheaper": f"the full tape's estimate exceeds {cache} and "
                                            f"recomputation is cheaper than its traffic ({model})",
                "over the budget": f"the full tape's estimate exceeds the budget {self.budget} B",
                "fits the budget": f"the full tape's estimate fits the budget {self.budget} B",
                }.get(self.why, "")

    def __str__(self) -> str:
        if self.full_tape:
            return (f"{self.source or '(no source line)'}: full tape kept: at most {self.steps} "
                    f"steps x {self.snapshot_bytes} B of state; {self.reason} "
                    f"(estimate {self.estimate} B; the tape of this call: {self.tape_bytes} B)")
        over = "" if self.within_budget else \
            "; over the budget: two snapshots, the final state and a step's tape are needed"
        seg = "" if self.segment <= 1 else \
            (f" of {self.segment} iterations each (a segment's tape, about {self.segment} x "
             f"{self.snapshot_bytes} B, fits a quarter of the {self.cache} B last-level cache "
             f"and half the budget; the full tape's estimate: {self.estimate} B)")
        why = f" (memory='auto': {self.reason})" if self.why else ""
        return (f"{self.source or '(no source line)'}: {self.steps} steps{seg}{why}; {self.snapshots} "
                f"snapshots of {self.snapshot_bytes} B held at most, with the final state and a "
                f"step's tape {self.held} B (budget {self.budget} B, room for {self.slots} "
                f"snapshots{over}); {self.recomputed} steps recomputed "
                f"(recomputation factor {self.recomputation:.2f})")

    @property
    def estimate(self) -> int:
        """The full tape as "auto" estimates it: trip bound x bytes of the state (segments x
        their iterations, for a segmented loop: a bound)."""
        return self.steps * self.segment * self.snapshot_bytes

    @property
    def held(self) -> int:
        """Bytes held at most: the snapshots, the final state's copy and one step's tape (counted
        as one state per iteration of a segment, docs/checkpointing.md)."""
        return (self.snapshots + 1 + max(1, self.segment)) * self.snapshot_bytes

    @property
    def within_budget(self) -> bool:
        return self.full_tape or self.held <= self.budget


@dataclass
class Explanation:
    kernel: str
    tape_bytes: int
    cached: list = field(default_factory=list)           # Cached values on the heap tape
    active: list = field(default_factory=list)           # (source, instruction)
    iterations: dict = field(default_factory=dict)       # loop -> iterations in this call
    unsupported: str = ""                                 # why no gradient could be built
    arena_bytes: int = 0                                  # BLAS/LAPACK inputs saved, this call
    updates: list = field(default_factory=list)           # prange loops' shadow updates
    checkpointed: list = field(default_factory=list)     # Checkpointed time loops
    not_stored: str = ""            # why the disk cache (when on) does not keep this gradient
    guarded_reruns: int = 0         # calls of this kernel redone guarded (modes/strong_zero.py)

    def __str__(self) -> str:
        lines = [f"explain({self.kernel})"]
        if self.unsupported:
            lines.append(f"  cannot differentiate: {self.unsupported}")
            return "\n".join(lines)
        lines.append(f"  active instructions: {len(self.active)}")
        for src, text in self.active:
            lines.append(f"    {src + ': ' if src else ''}{text.strip()}")
        lines.append(f"  cached values: {len(self.cached)}")
        for c in self.cached:
            lines.append(f"    {c}")
        for lp, n in self.iterations.items():
            lines.append(f"  loop {lp}: {n} iterations in this call")
        lines.append(f"  tape: {self.tape_bytes} bytes for these arguments")
        if self.arena_bytes:
            lines.append(f"  arena: {self.arena_bytes} bytes for these arguments (inputs of "
                         "BLAS/LAPACK calls saved for the reverse sweep, each rounded up to 16 B; "
                         "kept between calls)")
        if self.updates:
            lines.append(f"  shadow updates in parallel loops: {len(self.updates)}")
        for u in self.updates:
            where = user_line([u.location]) if u.location else ""
            why = f" ({u.reason})" if u.reason else ""
            lines.append(f"    {where + ': ' if where else ''}{u.instruction.strip()}\n"
                         f"      {u.how}{why}")
        if self.checkpointed:
            lines.append(f"  checkpointed loops: {len(self.checkpointed)} (one step's own tape "
                         "is counted as one state)")
        for c in self.checkpointed:
            lines.append(f"    {c}")
        if self.not_stored:
            lines.append(f"  disk cache: not stored: {self.not_stored}")
        if self.guarded_reruns:
            lines.append(f"  guarded reruns: {self.guarded_reruns} (calls whose derivatives came "
                         "out inf or NaN, redone with every product under the strong zero)")
        return "\n".join(lines)


def user_line(locations) -> str:
    """The innermost source line outside Numba's own package (and its generated `<string>`
    sources: a prange loop's gufunc)."""
    for f, line in locations:
        if NUMBA_DIR not in f and line and os.path.basename(f) != "<string>":
            return f"{f}:{line}"
    return ""


@kernel_options()
def explain(kernel: Callable, *args: Any, cache: str = "auto", seed: float = 1.0,
            memory: str = "tape") -> Explanation:
    """Describe the reverse-mode gradient of `kernel` for these annotated arguments.

    Reuses the compiled gradient (building it if needed). The caller's arrays are never changed:
    the gradient runs once on copies to count the loop iterations that size the tape.
    `memory` is autodiff's: with a budget, the time loops checkpointed are listed with their
    steps, snapshots and recomputation (docs/checkpointing.md).
    A CUDA kernel (`kernel[blocks, threads]`) gets enzyme_py.cuda's explanation: how each shadow
    update is made (plain, atomic, privatised per block), and what the tape holds.
    A split mode Tape (`explain(tape)`) gets what it caches and the bytes it holds now.
    """
    if isinstance(kernel, Tape):
        return _tape_explanation(kernel)
    if is_cuda(kernel):
        from .cuda.api import explain as cuda_explain   # the optional `cuda` extra
        return cuda_explain(kernel, *args, cache=cache)
    grad = inspect(kernel, *args, cache=cache, memory=memory)
    name = getattr(kernel, "__name__", "kernel")
    if grad.error is not None:
        return Explanation(name, 0, unsupported=str(grad.error))
    layout = grad.layout
    counts = run_on_copies(grad, args, seed, layout)
    names = variable_names(grad.captured, grad.kernel_name) if grad.captured else {}
    copies = dict(zip(map(id, layout.arena), counts[len(layout.loops):])) if counts else {}
    cached = [_cached(c, names, copies.get(id(c))) for c in layout.cached
              if c.loop is not None or id(c) in copies]
    active = [(user_line(locs), text) for text, locs in layout.active]
    arena_used = counts[-1] if counts and layout.arena else 0
    tape = layout.tape_bytes(counts)
    loops = checkpointed_loops(grad)
    for c in loops:
        c.tape_bytes = tape if c.full_tape else 0
    not_stored = (disk_cache.why_not(grad.verified) or "") if disk_cache.cache_dir() else ""
    return Explanation(name, tape, cached, active, dict(zip(layout.loops, counts)),
                       updates=list(layout.updates), checkpointed=loops, arena_bytes=int(arena_used),
                       not_stored=not_stored, guarded_reruns=strong_zero.reruns(kernel))


def _tape_explanation(tape) -> Explanation:
    layout = tape.layout
    cached = [_cached(c, {}) for c in layout.cached if c.loop is not None]
    active = [(user_line(locs), text) for text, locs in layout.active]
    return Explanation(tape.kernel_name, tape.nbytes, cached, active, tape.iterations())


def checkpointed_loops(grad) -> list:
    """The Checkpointed loops of a compiled gradient, as its last call ran them."""
    out = []
    for tl in grad.layout.checkpoints if grad.layout is not None else ():
        fig = dict(zip(tl.stat_fields, _read_global(grad, tl.stats, len(tl.stat_fields))))
        out.append(Checkpointed(user_line(tl.locations), fig["n"], fig["S"], fig["peak"],
                                fig["c"], tl.budget, fig["recomputed"], bool(fig["tape"]),
                                segment=fig["k"] if not fig["tape"] else 1, cache=fig["cache"],
                                why=WHY[fig["why"]] if tl.versioned else "",
                                recompute_ps=fig["recompute_ps"], traffic_ps=fig["traffic_ps"]))
    return out


def _read_global(grad, symbol: str, n: int) -> list:
    addr = llvm.address_of_symbol(symbol) or \
        grad.library.codegen._engine.get_global_value_address(symbol)
    return list((ctypes.c_int64 * n).from_address(addr))


_VALUE = re.compile(r'%("[^"]+"|[\w.$-]+)')


def _cached(c, names, arena_bytes=None) -> Cached:
    """A tape entry in the user's terms: its variable, its line's text, and LLVM names in the
    reason replaced by Python ones (`%arg.u.4` is `u`); `arena_bytes`: a copy's bytes this call."""
    source = user_line(c.locations)
    defined = re.match(r'\s*%("[^"]+"|[\w.$-]+) =', c.instruction)
    variable = names.get(defined.group(1).strip('"'), "") if defined else ""
    if c.arena:       # "%arg.B.4, argument 6 of @numba_xxgemm": the argument's Python name
        copied = re.match(r'\s*%("[^"]+"|[\w.$-]+),', c.instruction)
        variable = _python_names("%" + copied.group(1), names).lstrip("%") if copied else ""
    return Cached(c.instruction, source, _python_names(c.reason, names), c.bytes, c.loop,
                  variable, _code(source), None if arena_bytes is None else int(arena_bytes))


def _python_names(text: str, names: dict) -> str:
    def name(m):
        v = m.group(1).strip('"')
        arg = re.match(r"arg\.(\w+?)(\.\d+)*$", v)
        return arg.group(1) if arg else names.get(v, m.group(0))
    return _VALUE.sub(name, text)


def _code(source: str) -> str:
    if not source:
        return ""
    path, _, line = source.rpartition(":")
    return linecache.getline(path, int(line)).strip() if line.isdigit() else ""


def run_on_copies(grad, args, seed, layout) -> list:
    """Run the gradient on copies and read what it recorded: each taped loop's iteration count,
    then the bytes of each arena copy and the arena's bytes in use (TapeLayout.slots)."""
    if not layout.counts_symbol and not layout.checkpoints:
        return []
    annotated = [as_annotation(a) for a in args]
    primal = [copy_value(a.value) for a in annotated]
    shadows = [copy_value(a.shadow) for a in annotated
               if isinstance(a, (Duplicated, DuplicatedNoNeed))]
    grad.entry(*primal, *shadows, float(seed))
    if not layout.counts_symbol:
        return []
    return _read_global(grad, layout.counts_symbol, layout.slots())
