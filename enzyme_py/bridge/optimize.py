"""LLVM's module pipeline as both targets' cleanups run it (bridge/cleanup.py on the CPU,
cuda/cleanup.py for NVPTX): the callees made `alwaysinline` and internal, then O2 without
vectorization, unrolling or interleaving; O1 instead when O2 leaves irreducible control flow,
which AD cannot reverse (O2, not O1, made a loop with two entries out of `while a and b:` around
nested loops, fuzz seed 2031000444)."""
import re

import llvmlite.binding as llvm

from ir_passes import parse_module
from ir_passes import reducible as ir_reducible

DEBUG_RECORD = re.compile(r"^[ \t]+#dbg_\w+\(.*\n", re.M)   # variable locations: AD needs none


def o2_or_o1(clean) -> str:
    """`clean(2)`, or `clean(1)` when O2's result has irreducible control flow."""
    out = clean(2)
    return out if reducible(out) else clean(1)


def reducible(text: str) -> bool:
    """Does every defined function have reducible control flow (only natural loops)?"""
    try:
        module = parse_module(text)
    except Exception:          # noqa: BLE001 - the parser's error is reported later, where it is used
        return True
    return ir_reducible(module)


def inline_and_optimize(module: llvm.ModuleRef, fn_name: str, tm, level: int, refprune: bool = False) -> None:
    """Inline every callee into `fn_name` and run the pipeline at `level` for target machine `tm`
    (`refprune`: then NRT's refcount pruner); the module is verified."""
    for fn in module.functions:
        if fn.is_declaration or fn.name == fn_name:
            continue
        fn.add_function_attribute("alwaysinline")
        fn.linkage = llvm.Linkage.internal
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = False
    pto.slp_vectorization = False
    pto.loop_unrolling = False
    pto.loop_interleaving = False
    pb = llvm.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    if refprune:
        mpm.add_refprune_pass()
    mpm.run(module, pb)
    module.verify()
