"""Passes: small frozen dataclasses with a kebab-case name, runnable from `python -m ir_passes.opt`."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReverseMode:
    """Add the reverse-mode gradient of `fn` as `out`."""
    name = "reverse-mode"
    fn: str = ""
    activity: tuple = ()
    out: str = "grad"
    cache: str = "auto"
    noalias: bool = False
    libmvec: str = ""       # ISA letters (b, c, d, e): the rules' math calls name libmvec variants

    def apply(self, module) -> str | None:
        from .transforms.reverse import reverse_mode
        fn = self.fn or first_definition(module)
        act = list(self.activity) + ["const"] * (len(module.functions[fn].params) - len(self.activity))
        reverse_mode(module, fn, act, self.out, cache=self.cache, noalias=self.noalias,
                     vector_library=vector_library(self.libmvec))
        return None


@dataclass(frozen=True)
class ForwardMode:
    """Add the forward-mode tangent function of `fn` as `out` (`width` tangents per value)."""
    name = "forward-mode"
    fn: str = ""
    activity: tuple = ()
    out: str = "fwd"
    width: int = 1
    libmvec: str = ""       # as in ReverseMode

    def apply(self, module) -> str | None:
        from .transforms.forward import forward_mode
        fn = self.fn or first_definition(module)
        act = list(self.activity) + ["const"] * (len(module.functions[fn].params) - len(self.activity))
        forward_mode(module, fn, act, self.out, width=self.width,
                     vector_library=vector_library(self.libmvec))
        return None


def vector_library(isas: str):
    """glibc's libmvec for the ISA letters `isas` (transforms/vector_math.py), or None."""
    from .transforms.vector_math import libmvec
    return libmvec(tuple(isas)) if isas else None


@dataclass(frozen=True)
class HoistLoads:
    """Move loop-invariant loads to loop preheaders, with ir_passes' alias facts (reverse-mode
    runs this first)."""
    name = "hoist-loads"
    fn: str = ""
    noalias: bool = False

    def apply(self, module) -> str | None:
        from .transforms.hoist import hoist_invariant_loads
        hoist_invariant_loads(module.functions[self.fn or first_definition(module)], self.noalias)
        return None


@dataclass(frozen=True)
class ForwardStores:
    """Replace loads of a temporary filled by an earlier loop with the stored expression
    (transforms/store_forwarding.py; reverse-mode runs this first)."""
    name = "forward-stores"
    fn: str = ""
    noalias: bool = False

    def apply(self, module) -> str | None:
        from .transforms.store_forwarding import forward_loop_stores
        forward_loop_stores(module.functions[self.fn or first_definition(module)], self.noalias)
        return None


@dataclass(frozen=True)
class FoldSignTests:
    """Fold `icmp slt x, 0` (and the like) where x is never negative (reverse-mode runs this
    first); `nonnegative`: parameter indices known to be >= 0, such as array lengths."""
    name = "fold-sign-tests"
    fn: str = ""
    nonnegative: tuple = ()

    def apply(self, module) -> str | None:
        from .transforms.nonneg import fold_sign_tests
        fold_sign_tests(module.functions[self.fn or first_definition(module)], self.nonnegative)
        return None


@dataclass(frozen=True)
class Simplify:
    """LLVM's sroa, instcombine and simplifycfg through llvmlite: a canonical form for golden tests."""
    name = "simplify"

    def apply(self, module) -> str:
        import llvmlite.binding as llvm
        from .ir.printer import print_module
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


@dataclass(frozen=True)
class Printer:
    """Print an analysis of `fn`: dominators, loops, types or activity."""
    name = "print"
    what: str = "loops"
    fn: str = ""
    activity: tuple = ()

    def apply(self, module) -> str:
        from .analysis.activity import print_activity
        from .analysis.dominators import print_dominators
        from .analysis.loops import print_loops
        from .analysis.types import print_types
        f = module.functions[self.fn or first_definition(module)]
        if self.what == "activity":
            act = list(self.activity) + ["const"] * (len(f.params) - len(self.activity))
            return print_activity(f, act) + "\n"
        table = {"dominators": print_dominators, "loops": print_loops, "types": print_types}
        return table[self.what](f) + "\n"


def first_definition(module) -> str:
    for f in module.functions.values():
        if not f.is_declaration:
            return f.name
    raise ValueError("the module defines no function")


PASSES = {"reverse-mode": ReverseMode, "forward-mode": ForwardMode, "hoist-loads": HoistLoads,
          "forward-stores": ForwardStores, "fold-sign-tests": FoldSignTests, "simplify": Simplify,
          "print": Printer}
