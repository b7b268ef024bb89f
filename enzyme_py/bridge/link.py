"""Compile a generated module with Numba's own codegen (O3) into a code library.

The module is verified first, with every helper made internal (prepare_module); the entries
that call the generated function are built per mode (modes/, with entry.py and codegen.py).
"""
import ctypes
import re
import threading

import llvmlite.binding as llvm
from numba.core.compiler_lock import global_compiler_lock
from numba.core.environment import lookup_environment
from numba.core.registry import cpu_target
from numba.core.runtime import rtsys

from ir_passes import declared_runtime

from ..timings import stage
from . import runtime
from .library import library_class
from .nested import remember
from .verify import parse_checked

# LLVM's LoopLoadElimination, when it versions a loop under SCEV predicates, can leave a phi
# that does not dominate its uses: O3 turned a valid gradient into invalid IR (fuzz seed
# 2038001212, tests/regressions/test_fuzz_loop_load_elim_versioning.py). Without those
# predicates it still forwards stores to loads where no runtime check is needed. The option is
# process-wide, so Numba's compilation of other code loses only this versioning.
llvm.set_option("", "-loop-load-elimination-scev-check-threshold=0")


@stage("verify")
def prepare_module(text: str, grad_name: str, keep: tuple = ()) -> str:
    """Give every defined function but `grad_name` (its `.release`, and those in `keep`)
    internal linkage; verify.

    Internal helpers cannot clash with the same functions in other libraries. Functions and
    globals left unreferenced (the primal kernel, helpers inlined into the gradient) are
    dropped: O3 would drop them too, but only after optimizing each function on its own.
    Returns the verified module text; `compile_library` reuses the parsed module when
    given that very text (docs/performance.md, compile time).
    """
    module = parse_checked(text)
    found = False
    for fn in module.functions:
        if fn.name == grad_name:
            found = not fn.is_declaration
        elif not fn.is_declaration and fn.name != grad_name + ".release" \
                and fn.name not in keep:      # reverse/tape/tape.py's release, split entries
            fn.linkage = llvm.Linkage.internal
    if not found:
        raise ValueError(f"the generated module does not define @{grad_name}")
    _drop_unreferenced(module)
    module.verify()
    verified = str(module)
    _prepared.last = (verified, module)
    return verified


_prepared = threading.local()   # .last: (text, module) of the latest prepare_module here


def _drop_unreferenced(module) -> None:
    """LLVM's GlobalDCE: delete internal functions and globals nothing external reaches."""
    tm = cpu_target.target_context.codegen()._tm
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=0))
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_global_dead_code_eliminate_pass()
    mpm.run(module, pb)


def _parse_verified(text: str):
    """The module of `text`: the one prepare_module just printed it from, else parsed."""
    last = getattr(_prepared, "last", None)
    _prepared.last = None
    if last is not None and last[0] is text:
        return last[1]
    return llvm.parse_assembly(text)


def compile_library(text: str, name: str, environments=None):
    """Compile verified module text with Numba's codegen (O3) into a code library.

    `environments` ({global name: Numba Environment}, capture's): the library's environment
    globals that are defined are pointed at them, as Numba does for its own functions (an
    exception raised with run-time arguments boxes them only when its environment is set).
    The shareable runtime helpers the text declares are compiled once per process
    (runtime.py)."""
    runtime.ensure(declared_runtime(text))    # the helpers it calls by symbol, compiled first
    return _compile(text, name, environments)


@stage("O3 + codegen")
def _compile(text: str, name: str, environments):
    codegen = cpu_target.target_context.codegen()
    with global_compiler_lock:
        library = library_class(codegen)(codegen, f"enzyme_py.{name}")
        library.enable_object_caching()     # as Numba does: keeps the object for disk_cache
        library.add_llvm_module(_parse_verified(text))
        library.add_linking_library(rtsys.library)     # NRT_incref & co.
        library.finalize()
        _bind_environments(library, text, environments or {})
    remember(name, text, library)     # a kernel that calls it may be differentiated (nested.py)
    return library


def _bind_environments(library, text, environments) -> None:
    names = set(_ENV_GLOBAL.findall(text))
    bind_environments(library, [env for env in map(lambda n: find_environment(n, environments),
                                                   sorted(names)) if env is not None])


_ENV_GLOBAL = re.compile(r'^@"?(_ZN08NumbaEnv[^"\s=]*)"? =', re.M)


def find_environment(name, environments):
    """The Numba Environment called `name`: capture's (`environments`, {name: Environment}), or
    the live one Numba keeps for a function it compiled (an overload's helper that raises)."""
    env = (environments or {}).get(name)
    return env if env is not None else lookup_environment(name)


def bind_environments(library, environments) -> None:
    """Point the library's environment globals at `environments` (Numba Environments), as Numba
    does for its own functions; they stay alive as long as the library."""
    codegen = library.codegen
    bound = []
    for env in environments:
        address = codegen._engine.get_global_value_address(env.env_name)
        if address:
            (ctypes.c_void_p * 1).from_address(address)[0] = id(env)
            bound.append(env)
    library.__dict__["_enzyme_py_environments"] = bound    # alive as long as the code


def define_counts(layout) -> None:
    """Define a gradient's iteration-count global (ir_passes' `counts="declare"`) once, in a
    library of its own: Numba copies a linked library into each caller."""
    if layout is None:
        return
    symbols = [(layout.counts_symbol, layout.slots())] if layout.counts_symbol else []
    symbols += [(tl.stats, len(tl.stat_fields)) for tl in getattr(layout, "checkpoints", ())]  # checkpointed loops
    if symbols:
        text = "".join(f'@"{s}" = global [{n} x i64] zeroinitializer\n' for s, n in symbols)
        compile_library(text, symbols[0][0] + ".lib")
