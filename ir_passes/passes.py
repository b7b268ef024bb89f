"""Passes: small frozen dataclasses with a kebab-case name, runnable from `python -m ir_passes.opt`.

A pass declares its options as fields made with `option(help, parse)`: `opt` builds its command
line from them (`--activity dup,const` fills `activity`), and the FileCheck tests of a pass live
in tests/filecheck/<name>/.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import llvmlite.binding as llvm

from .analysis.activity import print_activity
from .analysis.alias import print_alias
from .analysis.branches import print_branches
from .analysis.decisions import print_decisions
from .analysis.dominators import print_dominators
from .analysis.forward_activity import print_forward_activity
from .analysis.loops import print_loops
from .analysis.nonnegative import print_nonnegative
from .analysis.sharing import Iterations, nvptx_iterations, print_sharing
from .analysis.tripcount import print_tripcounts
from .analysis.types import print_types
from .analysis.written import print_written
from .ir import types as T
from .ir.parser import parse_module
from .ir.printer import print_module
from .options import Activity
from .rules.convention import register_error_report
from .rules.blas import register_gemm, register_gemv
from .rules.effects import register_allocator, register_handle_realloc, register_writes_nothing
from .rules.libdevice import spelling
from .rules.parallel import ParallelUpdates, register_parallel_for
from .rules.registry import inactive
from .runtime import block_sum, warp_add
from .runtime.fresh_workspace import fresh_tapes
from .runtime.heap import Heap
from .runtime.helpers import ensure, release_objects
from .transforms.common.extent import Extent
from .transforms.common.vector_math import libmvec
from .transforms.forward.driver import forward_mode
from .transforms.pattern_union import union_arms
from .transforms.prepare.float_copies import retype_float_copies
from .transforms.prepare.fold_select_recurrences import fold_select_recurrences
from .transforms.prepare.fold_sign_tests import fold_sign_tests
from .transforms.prepare.forward_stores import forward_loop_stores
from .transforms.prepare.hoist_loads import hoist_invariant_loads
from .transforms.prepare.split_returns import split_returns
from .transforms.prepare.drop_parameter_refcounts import drop_parameter_refcounts
from .transforms.prepare.pipeline import PIPELINES, prepare
from .transforms.reverse.loops.checkpoint.budget import TAPE, Memory, memory_option, parse_size
from .transforms.reverse.loops.checkpoint.schedule import ensure_schedule, unpooled
from .transforms.reverse.sweeps.driver import reverse_mode
from .transforms.reverse.sweeps.report import print_availability
from .transforms.reverse.shadows.shadow_updates import Threads


FLOAT_TYPES = {"f64": T.f64, "f32": T.f32}


def words(text: str) -> tuple:
    """`a,b` -> ("a", "b")."""
    return tuple(a for a in text.split(",") if a)


def ints(text: str) -> tuple:
    """`2,3` -> (2, 3)."""
    return tuple(int(k) for k in text.split(",") if k)


def extents(text: str) -> tuple:
    """`0=1.2:3:f64,4=5.6+7.8:3` -> ((0, Extent([(1, 2)], 3, f64)), (4, Extent([(5, 6), (7, 8)], 3))):
    per pointer parameter, its dimensions (length.stride parameter indices), the parameter
    holding its item size, and optionally the float type it holds."""
    out = []
    for item in words(text):
        param, _, rest = item.partition("=")
        dims, size, *element = rest.split(":")
        out.append((int(param), Extent([tuple(int(k) for k in d.split(".")) for d in dims.split("+")],
                                       int(size), FLOAT_TYPES[element[0]] if element else None)))
    return tuple(out)


def memory(text: str) -> Memory:
    """`tape`, a budget such as `4KB` (checkpoint time loops in it), or `auto:4KB` (the budget
    memory="auto" stands for: segmented loops, or the full tape where it fits)."""
    if text.startswith("auto:"):
        return memory_option("auto", parse_size(text[5:]))
    return memory_option(text, 0)


def register_handles(specs) -> None:
    """Register handle allocators as a host does: `alloc:data:retain:release[:realloc]` each, the
    size the allocator's first argument, the reference counts inactive and writing no memory;
    realloc(handle, n) moves the data in place (a growing list)."""
    for spec in specs:
        alloc, data, retain, release, *realloc = spec.split(":")
        register_allocator(alloc, 0, data, retain, release)
        for name in realloc:
            register_handle_realloc(name)
        for name in (retain, release):
            inactive(name)
            register_writes_nothing(name)


def option(default, help: str, parse=None, choices=None):
    """A pass field that is also a command-line option of `opt`: `parse(text)` makes its value
    (None: a flag, for a bool); `choices` limits the text."""
    return field(default=default, metadata={"help": help, "parse": parse, "choices": choices})


FN = "the function to work on (default: the first defined)"
ACTIVITY = "per parameter: const, dup or active (missing ones are const)"
NOALIAS = "distinct pointer parameters never overlap"
EXTENTS = ("known memory extents: param=len.stride[+len.stride]:itemsize[:f64|f32] (parameter "
           "indices; common/extent.py)")
ERROR_REPORT = ("report,status,pending: the host's error report (rules/convention.py: how generated "
                "code raises an error)")
HANDLES = ("handle allocators to register first, each alloc:data:retain:release[:realloc] (a host "
           "registers its own)")
BLAS_RECORDS = {"gemv": register_gemv, "gemm": register_gemm}


def register_blas(specs) -> None:
    """Register BLAS routines as `kind:name` each (rules/blas.py), with the records' own argument
    indices (a host's wrappers that take BLAS's arguments after a type char)."""
    for spec in specs:
        kind, name = spec.split(":")
        BLAS_RECORDS[kind](name)
LIBMVEC = "ISA letters (b, c, d, e) whose libmvec variants the rules' math calls may use"
RUNTIME = ("declare: the runtime helpers that loop and allocate nothing are only declared; the host "
           "compiles them once (runtime/shared.py)")


def first_definition(module) -> str:
    for f in module.functions.values():
        if not f.is_declaration:
            return f.name
    raise ValueError("the module defines no function")


def padded(activity, fn) -> list:
    """`activity` with CONST for the parameters it leaves out."""
    return list(activity) + [Activity.CONST] * (len(fn.params) - len(activity))


def vector_library(isas: str):
    """glibc's libmvec for the ISA letters `isas` (transforms/common/vector_math.py), or None."""
    return libmvec(tuple(isas)) if isas else None


@dataclass(frozen=True)
class ReverseMode:
    """Add the reverse-mode gradient of `fn` as `out`."""
    name = "reverse-mode"
    fn: str = option("", FN, str)
    activity: tuple = option((), ACTIVITY, words)
    out: str = option("grad", "the name of the function to add", str)
    cache: str = option("auto", "what the tape keeps (docs/caching.md)", str, ("auto", "minimal", "always"))
    noalias: bool = option(False, NOALIAS)
    libmvec: str = option("", LIBMVEC, str)
    success_codes: tuple | None = option(None, "integer returns that are successes (default: "
                                         "every return), e.g. 0,-2", ints)
    threads: str = option("", "nvptx: the function is a CUDA kernel's body, run by many threads "
                          "(transforms/reverse/shadows/shadow_updates.py)", str, ("", "nvptx"))
    wide: tuple = option((), "with --threads: float32 adjoints summed in float64, and these "
                         "float32 parameters' shadows float64 (Threads.wide)", ints)
    split: bool = option(False, "add out.aug.0, out.rev and out.free: a tape kept for reverse "
                         "sweeps run any number of times (transforms/reverse/calls/public_split.py)")
    no_need: tuple = option((), "dup parameters whose final primal contents are not needed "
                            "(DuplicatedNoNeed: common/noneed.py)", ints)
    kept: tuple = option((), "with --split: pointer parameters the caller keeps unchanged for the "
                         "reverse sweeps (those not written are loaded again, not taped)", ints)
    extents: tuple = option((), EXTENTS, extents)
    memory: Memory = option(TAPE, "tape, a budget such as 4KB (checkpoint time loops), or auto:4KB "
                            "(reverse/loops/checkpoint/)", memory)
    parallel: str = option("auto", "how parallel loops' reverse sweeps add into shared shadows "
                           "(rules/parallel.py)", str, tuple(p.value for p in ParallelUpdates))
    launcher: tuple = option((), "name,thread_id[,raise...]: register a parallel-for launcher "
                             "(gufunc convention, rules/parallel.py)", words)
    guard_products: bool = option(False, "guard every adjoint product by the strong zero (rules/partials.py)")
    heap: tuple = option((), "allocate,free[,realloc]: the heap the gradient's memory comes from "
                         "(runtime/heap.py; default: libc)", words)
    fresh: bool = option(False, "tape arrays that live for one call: no workspace parked between calls")
    error_report: tuple = option((), ERROR_REPORT, words)
    handles: tuple = option((), HANDLES, words)
    blas: tuple = option((), "BLAS routines to register first, each gemv:NAME or gemm:NAME (rules/blas.py)",
                         words)
    runtime: str = option("define", RUNTIME, str, ("define", "declare"))

    def apply(self, module) -> str | None:
        register_handles(self.handles)
        register_blas(self.blas)
        fn = self.fn or first_definition(module)
        codes = {} if self.success_codes is None else {"success_codes": self.success_codes}
        codes["park"] = not self.fresh
        if self.split:
            codes.update(split_entries=True, counts=None, kept=self.kept)
        if self.threads == "nvptx":
            module.math_names = spelling
            codes.update(park=False, counts=None,
                         threads=Threads(lambda f: nvptx_iterations(f, True, True), block_sum="nvptx",
                                         wide=frozenset(self.wide) if self.wide else None))
        report(self.error_report)
        if self.launcher:
            register_parallel_for(self.launcher[0], thread_id=self.launcher[1],
                                  raise_calls=self.launcher[2:])
        if self.heap:
            codes["heap"] = heap_of(self.heap)
        reverse_mode(module, fn, padded(self.activity, module.functions[fn]), self.out,
                     cache=self.cache, noalias=self.noalias,
                     vector_library=vector_library(self.libmvec), no_need=self.no_need,
                     extents=dict(self.extents), memory=self.memory,
                     parallel=ParallelUpdates(self.parallel), guard_products=self.guard_products,
                     runtime=self.runtime, **codes)
        return None


@dataclass(frozen=True)
class ForwardMode:
    """Add the forward-mode tangent function of `fn` as `out` (`width` tangents per value)."""
    name = "forward-mode"
    fn: str = option("", FN, str)
    activity: tuple = option((), ACTIVITY, words)
    out: str = option("fwd", "the name of the function to add", str)
    width: int = option(1, "tangents per value (1 to 16)", int)
    libmvec: str = option("", LIBMVEC, str)
    handles: tuple = option((), HANDLES, words)
    unread_tangents: tuple = option((), "dup parameters whose tangents the caller does not read "
                                    "(their tangent stores are left out)", ints)
    runtime: str = option("define", RUNTIME, str, ("define", "declare"))

    def apply(self, module) -> str | None:
        register_handles(self.handles)
        fn = self.fn or first_definition(module)
        forward_mode(module, fn, padded(self.activity, module.functions[fn]), self.out,
                     width=self.width, vector_library=vector_library(self.libmvec),
                     unread_tangents=self.unread_tangents, runtime=self.runtime)
        return None


@dataclass(frozen=True)
class HoistLoads:
    """Move loop-invariant loads to loop preheaders, with ir_passes' alias facts (reverse-mode
    runs this first)."""
    name = "hoist-loads"
    fn: str = option("", FN, str)
    noalias: bool = option(False, NOALIAS)

    def apply(self, module) -> str | None:
        hoist_invariant_loads(module.functions[self.fn or first_definition(module)], self.noalias)
        return None


@dataclass(frozen=True)
class ForwardStores:
    """Replace loads of a temporary filled by an earlier loop with the stored expression
    (transforms/prepare/forward_stores.py; reverse-mode runs this first)."""
    name = "forward-stores"
    fn: str = option("", FN, str)
    noalias: bool = option(False, NOALIAS)

    def apply(self, module) -> str | None:
        forward_loop_stores(module.functions[self.fn or first_definition(module)], self.noalias)
        return None


@dataclass(frozen=True)
class DropParameterRefcounts:
    """Remove the retains and releases of handle parameters nothing else uses
    (transforms/prepare/drop_parameter_refcounts.py; reverse-mode runs this first)."""
    name = "drop-parameter-refcounts"
    fn: str = option("", FN, str)
    refcounts: tuple = option((), "the retain and the release function (default: the "
                              "registered allocators')", words)

    def apply(self, module) -> str | None:
        rc = ({self.refcounts[0]}, {self.refcounts[1]}) if self.refcounts else None
        drop_parameter_refcounts(module.functions[self.fn or first_definition(module)], rc)
        return None


@dataclass(frozen=True)
class FoldSelectRecurrences:
    """Fold `k1 = select c, i, k` carried by a header phi `k` with c loop-invariant into
    `select c, i, init` (reverse-mode runs this first): a broadcast index, recomputed, not taped."""
    name = "fold-select-recurrences"
    fn: str = option("", FN, str)

    def apply(self, module) -> str | None:
        fold_select_recurrences(module.functions[self.fn or first_definition(module)])
        return None


@dataclass(frozen=True)
class FoldSignTests:
    """Fold `icmp slt x, 0` (and the like) where x is never negative (reverse-mode runs this
    first); `nonnegative`: parameter indices known to be >= 0, such as array lengths."""
    name = "fold-sign-tests"
    fn: str = option("", FN, str)
    nonnegative: tuple = option((), "parameter indices whose values are >= 0", ints)

    def apply(self, module) -> str | None:
        fold_sign_tests(module.functions[self.fn or first_definition(module)], self.nonnegative)
        return None


@dataclass(frozen=True)
class PatternUnion:
    """Run both arms of each decision on the inputs' values, for a sparsity pattern that holds
    for every input (transforms/pattern_union.py)."""
    name = "pattern-union"
    fn: str = option("", FN, str)
    activity: tuple = option((), ACTIVITY, words)

    def apply(self, module) -> str | None:
        fn = self.fn or first_definition(module)
        union_arms(module, fn, padded(self.activity, module.functions[fn]))
        return None


@dataclass(frozen=True)
class SplitReturns:
    """Give each predecessor of a merged `phi` + `ret` block its own `ret` (reverse-mode runs
    this first): raise paths return a constant status, so they get no adjoint code."""
    name = "split-returns"
    fn: str = option("", FN, str)

    def apply(self, module) -> str | None:
        split_returns(module.functions[self.fn or first_definition(module)])
        return None


@dataclass(frozen=True)
class FloatCopies:
    """Give an integer load that is only stored (a small memcpy) the float type of the slot it
    reads (transforms/prepare/float_copies.py; both modes run this first)."""
    name = "float-copies"
    fn: str = option("", FN, str)

    def apply(self, module) -> str | None:
        retype_float_copies(module.functions[self.fn or first_definition(module)])
        return None


@dataclass(frozen=True)
class Prepare:
    """Run a mode's prepare pipeline on `fn` (transforms/prepare/pipeline.py: the passes above,
    in the order the mode runs them before differentiating)."""
    name = "prepare"
    fn: str = option("", FN, str)
    mode: str = option("reverse", "the pipeline: reverse or forward", str, tuple(PIPELINES))
    noalias: bool = option(False, NOALIAS)
    extents: tuple = option((), EXTENTS, extents)

    def apply(self, module) -> str | None:
        prepare(PIPELINES[self.mode], module.functions[self.fn or first_definition(module)],
                self.noalias, dict(self.extents))
        return None


@dataclass(frozen=True)
class Simplify:
    """LLVM's sroa, instcombine and simplifycfg through llvmlite: a canonical form for golden tests."""
    name = "simplify"

    def apply(self, module) -> str:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        mod = llvm.parse_assembly(print_module(module))
        mod.verify()
        tm = llvm.Target.from_default_triple().create_target_machine()
        pto = llvm.create_pipeline_tuning_options(speed_level=1)
        pto.loop_vectorization = pto.slp_vectorization = pto.loop_unrolling = False
        pb = llvm.create_pass_builder(tm, pto)
        fpm = llvm.create_new_function_pass_manager()
        fpm.add_sroa_pass()
        fpm.add_instruction_combine_pass()
        fpm.add_simplify_cfg_pass()
        for f in mod.functions:
            if not f.is_declaration:
                fpm.run(f, pb)
        return str(mod)


def report(names: tuple) -> None:
    """Register `(report, status, pending)` as the host's error report, when given."""
    if names:
        register_error_report(names[0], int(names[1]), names[2])


def heap_of(names: tuple) -> Heap:
    """`(allocate, free[, realloc])` as a Heap (no realloc: growth by allocate + copy + free)."""
    return Heap(*names) if len(names) == 3 else Heap(*names, realloc=None)


def add_helper(module, name: str) -> None:
    """Add runtime helper `name` to the module the way the generated code gets it."""
    if name.startswith("enzpy.block_sum.det."):      # enzpy.block_sum.det.<target>.<suffix>
        target, suffix = name.split(".")[3:5]
        block_sum.ensure_deterministic(module, target, FLOAT_TYPES[suffix])
    elif name.startswith("enzpy.block_sum."):
        target, suffix = name.split(".")[2:4]
        block_sum.ensure(module, target, FLOAT_TYPES[suffix])
    elif name.startswith("enzpy.warp_add.nvptx."):
        warp_add.ensure(module, FLOAT_TYPES[name.rsplit(".", 1)[1]])
    elif name.startswith("enzpy.release_objects."):
        release_objects(module, name.split(".", 2)[2])
    elif name.startswith("enzpy.ckpt."):
        ensure_schedule(module)
    else:
        ensure(module, name)


@dataclass(frozen=True)
class Runtime:
    """Add runtime helpers (ir_passes/runtime/*.ll) to the module as the generated code gets
    them, for the module's heap; `fresh`: then the variants that keep nothing between calls
    (fresh_tapes, unpooled checkpoint frames), as forward mode over a gradient uses them."""
    name = "runtime"
    helpers: tuple = option((), "the helpers to add, e.g. enzpy.digamma,enzpy.block_sum.nvptx.f64", words)
    heap: tuple = option((), "allocate,free[,realloc]: the heap to write them for (default: libc)", words)
    fresh: bool = option(False, "replace the workspace and checkpoint helpers by their per-call variants")
    error_report: tuple = option((), ERROR_REPORT, words)

    def apply(self, module) -> str | None:
        report(self.error_report)
        if self.heap:
            module.heap = heap_of(self.heap)
        for name in self.helpers:
            add_helper(module, name)
        if self.fresh:
            fresh_tapes(module)
            unpooled(module)
        return None


PRINTERS = ("dominators", "loops", "types", "branches", "tripcounts", "alias", "nonnegative",
            "activity", "forward-activity", "availability", "sharing", "written", "decisions")


@dataclass(frozen=True)
class Printer:
    """Print an analysis of `fn` (PRINTERS); `availability` builds the gradient (on a copy of
    the module) and prints its availability plan: what is recomputed, what is taped; `sharing`
    which memory accesses are private to an iteration (`index`: the values that index it,
    `varying`: other per-iteration values; without them, a one-dimensional CUDA launch's threads)."""
    name = "print"
    what: str = option("loops", "the analysis to print", str, PRINTERS)
    fn: str = option("", FN, str)
    activity: tuple = option((), ACTIVITY, words)
    noalias: bool = option(False, NOALIAS)
    nonnegative: tuple = option((), "parameter indices whose values are >= 0", ints)
    cache: str = option("auto", "what the tape keeps (docs/caching.md)", str, ("auto", "minimal", "always"))
    index: tuple = option((), "with --what sharing: the values (names without %) that index the "
                          "iteration", words)
    varying: tuple = option((), "with --what sharing: other per-iteration values", words)

    def apply(self, module) -> str:
        name = self.fn or first_definition(module)
        f = module.functions[name]
        if self.what == "availability":
            copy = parse_module(print_module(module))
            g = reverse_mode(copy, name, padded(self.activity, f), "grad", cache=self.cache,
                             noalias=self.noalias)
            return print_availability(g) + "\n"
        table = {"dominators": print_dominators, "loops": print_loops, "types": print_types,
                 "branches": print_branches, "tripcounts": print_tripcounts,
                 "alias": lambda f: print_alias(f, self.noalias),
                 "nonnegative": lambda f: print_nonnegative(f, self.nonnegative),
                 "activity": lambda f: print_activity(f, padded(self.activity, f)),
                 "forward-activity": lambda f: print_forward_activity(f, padded(self.activity, f)),
                 "sharing": self._sharing, "written": print_written,
                 "decisions": lambda f: print_decisions(module, f.name, padded(self.activity, f))}
        return table[self.what](f) + "\n"

    def _sharing(self, f) -> str:
        values = {a.name: a for a in f.params} | {i.name: i for i in f.instructions() if i.name}
        if self.index:
            it = Iterations(index=tuple(values[n] for n in self.index),
                            varying=tuple(values[n] for n in self.varying))
        else:
            it = nvptx_iterations(f, True, True)
        return print_sharing(f, it, self.noalias)


PASSES = {p.name: p for p in (ReverseMode, ForwardMode, HoistLoads, ForwardStores, FoldSignTests,
                              PatternUnion,
                              DropParameterRefcounts,
                              FloatCopies,
                              FoldSelectRecurrences, SplitReturns, Prepare,
                              Simplify, Printer, Runtime)}
