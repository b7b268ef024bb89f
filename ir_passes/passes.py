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
from .ir.parser import parse_module
from .ir.printer import print_module
from .options import Activity
from .rules.libdevice import spelling
from .transforms.common.vector_math import libmvec
from .transforms.forward.driver import forward_mode
from .transforms.prepare.float_copies import retype_float_copies
from .transforms.prepare.fold_select_recurrences import fold_select_recurrences
from .transforms.prepare.fold_sign_tests import fold_sign_tests
from .transforms.prepare.forward_stores import forward_loop_stores
from .transforms.prepare.hoist_loads import hoist_invariant_loads
from .transforms.prepare.split_returns import split_returns
from .transforms.prepare.drop_parameter_refcounts import drop_parameter_refcounts
from .transforms.reverse.driver import reverse_mode
from .transforms.reverse.report import print_availability
from .transforms.reverse.shadow_updates import Threads


def words(text: str) -> tuple:
    """`a,b` -> ("a", "b")."""
    return tuple(a for a in text.split(",") if a)


def ints(text: str) -> tuple:
    """`2,3` -> (2, 3)."""
    return tuple(int(k) for k in text.split(",") if k)


def option(default, help: str, parse=None, choices=None):
    """A pass field that is also a command-line option of `opt`: `parse(text)` makes its value
    (None: a flag, for a bool); `choices` limits the text."""
    return field(default=default, metadata={"help": help, "parse": parse, "choices": choices})


FN = "the function to work on (default: the first defined)"
ACTIVITY = "per parameter: const, dup or active (missing ones are const)"
NOALIAS = "distinct pointer parameters never overlap"
LIBMVEC = "ISA letters (b, c, d, e) whose libmvec variants the rules' math calls may use"


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
                          "(transforms/reverse/shadow_updates.py)", str, ("", "nvptx"))
    split: bool = option(False, "add out.aug.0, out.rev and out.free: a tape kept for reverse "
                         "sweeps run any number of times (transforms/reverse/public_split.py)")

    def apply(self, module) -> str | None:
        fn = self.fn or first_definition(module)
        codes = {} if self.success_codes is None else {"success_codes": self.success_codes}
        if self.split:
            codes.update(split_entries=True, counts=None)
        if self.threads == "nvptx":
            module.math_names = spelling
            codes.update(park=False, counts=None,
                         threads=Threads(lambda f: nvptx_iterations(f, True, True), block_sum="nvptx"))
        reverse_mode(module, fn, padded(self.activity, module.functions[fn]), self.out,
                     cache=self.cache, noalias=self.noalias,
                     vector_library=vector_library(self.libmvec), **codes)
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

    def apply(self, module) -> str | None:
        fn = self.fn or first_definition(module)
        forward_mode(module, fn, padded(self.activity, module.functions[fn]), self.out,
                     width=self.width, vector_library=vector_library(self.libmvec))
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
                              DropParameterRefcounts,
                              FloatCopies,
                              FoldSelectRecurrences, SplitReturns,
                              Simplify, Printer)}
