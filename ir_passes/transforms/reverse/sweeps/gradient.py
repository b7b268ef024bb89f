"""The state one gradient synthesis shares: the primal, the new function, analyses and maps.

Every field is declared here (`__slots__`); the modules of reverse mode read and fill them, and
none adds its own."""
from __future__ import annotations

from enum import Enum

from ....analysis.activity import (activity_analysis, check_constant_stores, check_float_bits,
                                  check_integer_views,
                                  check_handle_stores, check_pointer_stores)
from ....analysis.alias import alias_analysis
from ....analysis.dominators import dominators
from ....analysis.forward_activity import failing_blocks
from ....analysis.loops import loop_info
from ....analysis.tripcount import trip_bound
from ....analysis.types import type_analysis
from ....errors import InternalError, UnsupportedError
from ....ir import types as T
from ....ir.builder import MathBuilder
from ....ir.edit import splice
from ....ir.module import Function
from ....ir.values import Argument, Constant, ConstFloat, ConstInt
from ....options import Activity, CacheMode
from ....rules.effects import check_refused_calls
from ....runtime.helpers import ensure
from ...common import diagnostics
from ...common.noneed import unneeded_stores
from ..shadows import deferred_rank1
from ..tape.availability import Availability
from ..tape.retain import retained_allocations
from ..shadows.shadow_updates import ShadowUpdates, convert
from ..tape.tape import Tape
from ..tape.tape_keys import LoopStart


class Sweep(Enum):
    """Which half of the gradient a block belongs to."""
    FORWARD = "fwd"
    REVERSE = "rev"


class Gradient:
    __slots__ = (
        "module", "primal", "activity", "cache_mode", "split", "extents", "success_codes",
        "loops", "dom", "preds", "trip_bounds", "exact_trips", "types", "act", "alias", "unneeded",
        "null_ptr", "params", "shadow_params", "dout_params", "fn", "sweep", "sweep_of",
        "alloca_block", "alloca_builder", "init_block", "init_builder", "keep_alive",
        "adjoints", "tape", "avail", "cache_sites", "shadow_cache_sites", "starts", "current_starts",
        "recurrences", "recurrence_fields", "recurrence_markers", "alloca_shadows", "restores",
        "restore_markers", "final_copies", "fused", "gated", "fwd", "deferred", "deferred_quiet", "rank1_deferred",
        "retained",
        "retained_fields", "stand_ins", "use_lists", "layout", "counts_symbol", "updates",
        "fixed_trips", "parallel_failed", "launch_pool", "keep_frame", "kept",
        "__weakref__")   # rules/lapack_qr.py keys per-function slots on the gradient

    def __init__(self, module, primal, activity, out_name, cache_mode=CacheMode.AUTO, noalias=False,
                 split=False, extents=None, success_codes=None, no_need=()):
        if len(activity) != len(primal.params):
            raise ValueError(f"activity has {len(activity)} entries, @{primal.name} has "
                             f"{len(primal.params)} parameters")
        self.module, self.primal, self.activity = module, primal, [Activity(a) for a in activity]
        self.cache_mode = CacheMode(cache_mode)
        self.split = split            # an augmented forward + reverse pair instead of one function
        self.success_codes = success_codes   # integer statuses that are successes; None: all
        self.loops = loop_info(primal)
        self.dom = dominators(primal)
        self.trip_bounds = {lp: trip_bound(lp, self.dom) for lp in self.loops.loops}
        self.exact_trips: dict = {}   # Loop -> tripcount.ExactTrip or None (set by synthesize)
        self.types = type_analysis(primal, {k: e.element for k, e in (extents or {}).items()})
        self.act = activity_analysis(primal, self.activity, module)
        self.alias = alias_analysis(primal, noalias_params=noalias)
        check_refused_calls(primal, self.unsupported)
        check_constant_stores(primal, self.act, self.locate)
        check_integer_views(primal, self.act, self.locate)
        check_float_bits(primal, self.act, self.locate)
        check_pointer_stores(primal, self.act, self.locate, failing_blocks(primal))
        check_handle_stores(primal, self.act, self.locate, failing_blocks(primal))
        self.null_ptr = Constant(T.ptr, "null")
        self.extents = dict(extents or {})  # param index -> Extent of its memory
        self.keep_alive: list = []    # scratch blocks whose ids key memo entries
        self.sweep_of: dict = {}      # block of the gradient -> the Sweep it belongs to
        self._make_function(out_name, noalias and not split)
        self.adjoints: dict = {}      # id(primal value) -> alloca of its adjoint
        self.cache_sites: dict = {}   # tape Entry -> primal instruction whose value it holds
        self.shadow_cache_sites: dict = {}
        self.tape = Tape(self)
        self.avail = Availability(self)
        self.starts: dict = {}        # Loop -> tape key of its start counter
        self.recurrences: dict = {}   # header phi -> Loop it runs backwards in (recurrence.py)
        self.recurrence_fields: dict = {}
        self.recurrence_markers: list = []
        self.current_starts: dict = {}  # Loop -> frame field: its start, while reversing it
        self.alloca_shadows: dict = {}  # primal alloca -> frame Field holding its shadow
        self.restores: set = set()    # stores the reverse sweep undoes (restore.py)
        self.restore_markers: dict = {}
        self.final_copies: dict = {}  # restored parameter -> frame field of its final contents
        self.fused: set = set()       # loops reversed an iteration at a time (fusion.py)
        self.gated: dict = {}         # loops whose reverse a select's choice may skip (gated.py)
        self.fwd = None               # the ForwardSweep, once synthesis starts
        self.deferred: dict = {}      # (loop, id(pointer), type) -> deferred.py's slot
        self.deferred_quiet: dict = {}
        self.rank1_deferred: dict = {}   # id(BLAS call) -> deferred_rank1.Deferral
        self.retained, self.alias.persistent = retained_allocations(self)  # retain.py
        self.retained_fields: list = []
        self.stand_ins: dict = {}     # Const param index -> its stand-in shadow (stand_in.py)
        self.use_lists = None         # id(primal value) -> its users, built on first use (memory.py)
        self.unneeded = unneeded_stores(primal, self.alias, no_need)   # noneed.py
        reachable = set(self.dom.order)
        all_preds = primal.predecessors()
        self.preds = {blk: [p for p in all_preds[blk] if p in reachable] for blk in self.dom.order}
        self.layout = None            # report.TapeLayout, when the gradient is complete
        self.counts_symbol = None     # the global report.record_counts defined, if any
        self.updates = ShadowUpdates(self, None)   # plain, or per thread (shadow_updates.py)
        self.fixed_trips: dict = {}   # Loop -> iterations its tape arrays hold in the frame (tape.py)
        self.parallel_failed = None   # (frame field, error status): a launch's body raised
        self.launch_pool = None       # (pool, records used) fields: parallel_launch._pool
        self.keep_frame = False       # split: the frame and its tape arrays outlive the call (driver.split)
        self.kept = frozenset()       # split: params whose memory the caller keeps for the reverse sweep

    def _make_function(self, out_name: str, noalias: bool) -> None:
        """noalias: the caller promised that the memory of distinct pointer parameters never
        overlaps; the data parameters (those with a known extent) and the shadows say so to
        LLVM, so it can keep values in registers across shadow updates. A parameter the primal
        declares `noalias` (a host's return slot) stays so."""
        p = self.primal
        params = [Argument(a.type, a.name or f"arg{k}",
                           "noalias" if noalias and k in self.extents or "noalias" in a.attrs.split()
                           else "", k)
                  for k, a in enumerate(p.params)]
        self.shadow_params, self.dout_params = {}, {}
        for k, mode in enumerate(self.activity):
            if mode is Activity.DUP:
                a = Argument(T.ptr, f"{params[k].name}.shadow", "noalias" if noalias else "",
                             len(params))
                self.shadow_params[k] = a
                params.append(a)
        for k, mode in enumerate(self.activity):
            if mode is Activity.ACTIVE:
                a = Argument(T.ptr, f"{params[k].name}.dout", "", len(params))
                self.dout_params[k] = a
                params.append(a)
        self.params = params
        self.fn = Function(out_name, p.ret_type, params, prefix="define")
        self.fn.generated = True
        self.module.add_function(self.fn)
        self.sweep = Sweep.FORWARD
        self.alloca_block = self.new_block("alloca")   # adjoint slots (reverse-local)
        self.alloca_builder = MathBuilder(self.module, self.alloca_block)
        self.init_block = self.new_block("state")      # frame initialization (forward)
        self.init_builder = MathBuilder(self.module, self.init_block)

    # --- what rule emitters use (rules/context.py: ReverseContext)
    def has_shadow(self, v) -> bool:
        return self.act.has_shadow(v)

    def is_active(self, v) -> bool:
        return self.act.is_active(v)

    def primal_at(self, v, block, b):
        return self.avail.primal(v, block, b)

    def shadow_at(self, p, block, b):
        return self.avail.shadow(p, block, b)

    def written_after(self, inst, p) -> bool:
        """May a write after `inst` change what p points to before the reverse sweep reads it?"""
        for w, q in self.alias.writes:
            if w is inst or not self.alias.may_run_after(inst, w):
                continue
            if q is None or self.alias.may_alias(p, q):
                return True
        return False

    def stack_slot(self, type, name: str = ""):
        return self.alloca_builder.alloca(type, name)

    def saved(self, key, type, at, block, b, reason: str):
        e = self.tape.entry(key, type, self.loops.loop_of(at.block), reason, source=at)
        return self.tape.read(b, e, block)

    def arena_base(self, b):
        return self.tape.load(b, self.tape.arena_fields()[0])

    def arena_push(self, b, sizes, data=None) -> list:
        fields = [self.tape.frame.address(b, f) for f in self.tape.arena_fields()]
        ensure(self.module, "enzpy.arena_push")
        return [b.call("enzpy.arena_push", T.i64, fields + [data or self.null_ptr, s]) for s in sizes]

    def copy_to_arena(self, b, e, data, size) -> None:
        """Forward sweep: copy `size` bytes at `data` into the arena; tape entry `e` keeps the
        offset, and `explain` the bytes."""
        off, = self.arena_push(b, [size], data)
        self.tape.write(b, e, off)
        self.tape.count_arena_bytes(b, e.key, size)

    def rank1(self, b, call, block, ft, alpha, u, v, adjoint, a, dims) -> None:
        """shadow(a) += alpha u v^T for a BLAS record's reverse, `adjoint` ("a": u, "b": v) the
        adjoint factor (deferred_rank1.py)."""
        deferred_rank1.rank1(self, b, call, block, ft, alpha, u, v, adjoint, a, dims)

    def new_block(self, name: str):
        """A block of the gradient, tagged with the sweep creating it."""
        blk = self.fn.add_block(name)
        self.sweep_of[blk] = self.sweep
        return blk

    def splice(self, marker, emit, name: str = "splice") -> None:
        """Replace a marker instruction with the code `emit(builder)` builds (the scratch block is
        kept alive: availability's memo keys on block ids)."""
        self.keep_alive.append(splice(self.module, marker, emit, name))

    # --- adjoints
    def adjoint_slot(self, v):
        if id(v) not in self.adjoints:
            b = self.alloca_builder
            t = self.updates.adjoint_type(v.type)      # float32 summed in float64 (Threads.wide)
            slot = b.alloca(t, f"d.{v.name or 'v'}")
            b.store(ConstFloat(t, 0.0), slot)
            self.adjoints[id(v)] = slot
        return self.adjoints[id(v)]

    def add_adjoint(self, b, v, d) -> None:
        """adj[v] += d, for an active v (anything else has no adjoint)."""
        if d is None or not self.act.is_active(v):
            return
        if d.type not in (v.type, self.updates.adjoint_type(v.type)):
            raise InternalError(f"an adjoint of type {d.type} is added to a value of type {v.type}",
                                diagnostics.describe(v))
        slot = self.adjoint_slot(v)
        t = self.updates.adjoint_type(v.type)
        b.store(b.accumulate(b.load(t, slot), convert(b, d, t)), slot)

    def take_adjoint(self, b, v, summed=False):
        """Read adj[v] and reset it to zero: each definition consumes its adjoint. `summed`: in
        the type it is summed in (float64 for float32 with Threads.wide), else in v's type."""
        slot = self.adjoint_slot(v)
        t = self.updates.adjoint_type(v.type)
        d = b.load(t, slot)
        b.store(ConstFloat(t, 0.0), slot)
        return d if summed else convert(b, d, v.type)

    # --- loops
    def loop_start(self, loop, block, b):
        """The value of c_L when the most recent entry into `loop` happened. Inside the loop it is
        a frame field set when the reverse sweep enters the loop (a register after SROA), so
        reverse loops stay countable; outside, c_L minus the entry's exact trip count when it is
        known, else read from the tape."""
        if block in loop.blocks:
            return self.tape.load(b, self.current_start(loop))
        if self.exact_trips.get(loop) is not None:
            return b.sub(self.tape.load(b, self.tape.counter(loop)), self.exact_trip_count(loop, block, b))
        return self.tape.read(b, self.start_entry(loop), block)

    def entry_start(self, loop, src, b):
        """Entering `loop` backwards from its block `src`, its counter stepped back to the last
        iteration: c_L at the start of this entry. With an exact trip count N it is c_L - N + 1
        and the loop needs no start on the tape."""
        if self.exact_trips.get(loop) is None:
            return self.tape.read(b, self.start_entry(loop), src)
        c = self.tape.load(b, self.tape.counter(loop))
        return b.add(b.sub(c, self.exact_trip_count(loop, src, b)), ConstInt(T.i64, 1))

    def exact_trip_count(self, loop, block, b):
        """The exact iterations of the most recent entry of `loop` (tripcount.ExactTrip)."""
        et = self.exact_trips[loop]
        init, bound = self.avail.primal(et.init, block, b), self.avail.primal(et.bound, block, b)
        d = b.sub(bound, init) if et.step == 1 else b.sub(init, bound)
        one, zero = ConstInt(T.i64, 1), ConstInt(T.i64, 0)
        if not et.strict:
            return b.add(d, one) if et.on_phi else d
        if et.on_phi:
            return b.add(b.select(b.icmp("sgt", d, zero), d, zero), one)
        return b.select(b.icmp("sgt", d, one), d, one)

    def start_entry(self, loop):
        e = self.tape.entry(LoopStart(loop), T.i64, loop.parent,
                            "the reverse sweep runs this loop backwards from its counter")
        self.starts[loop] = e
        return e

    def current_start(self, loop):
        if loop not in self.current_starts:
            self.current_starts[loop] = self.tape.new_field(T.i64)
        return self.current_starts[loop]

    # --- messages (common/diagnostics.py)
    def locate(self, inst):
        return diagnostics.locate(self.module, inst)

    def describe(self, inst) -> str:
        return diagnostics.describe(inst)

    def describe_write(self, w) -> str:
        return diagnostics.describe_write(w)

    def unsupported(self, what: str, inst, hint: str = "") -> UnsupportedError:
        return diagnostics.unsupported(self.module, what, inst, hint)
