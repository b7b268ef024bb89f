"""The Numba return type of a call, without compiling machine code.

`return_type(dispatcher, argtypes)` reads the return type of a compiled overload when there is
one (explicit signatures resolve as Numba dispatches them, bridge/capture.py); otherwise it runs
Numba's untyped and typed passes only, with the dispatcher's flags and locals, and stops: no
lowering, no optimisation, no machine code. The result is cached per (dispatcher, types).
"""
from __future__ import annotations

import threading
import weakref

from numba.core import compiler
from numba.core.compiler_lock import global_compiler_lock
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.errors import NumbaError

from .capture import resolve_overload
from .codegen import type_names

_lock = threading.Lock()
_restypes: dict = {}    # (id(dispatcher), argtypes) -> (weakref to the dispatcher, return type)


def return_type(dispatcher, argtypes):
    """The Numba return type of `dispatcher(*argtypes)`; `argtypes` folded as Numba folds a call
    (`types.Omitted` for defaults left out). TypeError when Numba cannot type the call."""
    argtypes, original = resolve_overload(dispatcher, tuple(argtypes))
    if original is not None:
        return original.signature.return_type
    key = (id(dispatcher), argtypes)
    got = _restypes.get(key)
    if got is not None and got[0]() is dispatcher:
        return got[1]
    restype = _type_only(dispatcher, argtypes)
    with _lock:
        _restypes[key] = (weakref.ref(dispatcher), restype)
    return restype


def _type_only(dispatcher, argtypes):
    fcomp = dispatcher._compiler
    if fcomp.pipeline_class is not compiler.Compiler:    # a custom pipeline: compile it
        dispatcher.compile(tuple(argtypes))
        return dispatcher.overloads[tuple(argtypes)].signature.return_type
    flags = compiler.Flags()
    fcomp.targetdescr.options.parse_as_flags(flags, fcomp.targetoptions)
    flags = fcomp._customize_flags(flags)
    try:
        with global_compiler_lock:
            return compiler.compile_extra(
                fcomp.targetdescr.typing_context, fcomp.targetdescr.target_context,
                fcomp._get_implementation(tuple(argtypes), {}), args=tuple(argtypes),
                return_type=None, flags=flags, locals=dispatcher.locals,
                pipeline_class=TypingOnly)
    except NumbaError as exc:
        raise TypeError(f"Numba cannot compile {dispatcher.py_func.__qualname__} for argument "
                        f"types ({type_names(argtypes)}):\n{exc}") from None


@register_pass(mutates_CFG=False, analysis_only=True)
class StopAfterTyping(FunctionPass):
    """Ends the pipeline with the inferred return type as its result."""
    _name = "enzyme_py_stop_after_typing"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        raise compiler._EarlyPipelineCompletion(state.return_type)


class TypingOnly(compiler.CompilerBase):
    """Numba's untyped and typed passes, then StopAfterTyping."""

    def define_pipelines(self):
        dpb = compiler.DefaultPassBuilder
        pm = PassManager("enzyme_py typing")
        pm.passes.extend(dpb.define_untyped_pipeline(self.state).passes)
        pm.passes.extend(dpb.define_typed_pipeline(self.state).passes)
        pm.add_pass(StopAfterTyping, "stop after typing")
        pm.finalize()
        return [pm]
