"""Compile a generated gradient into Numba and build a callable entry point.

The gradient module is compiled by Numba's own codegen (O3) into a code
library. A Numba `@intrinsic` declares the gradient function, flattens the
primal arguments exactly as Numba's calling convention does, passes the shadow
pointers and derivative slots, and turns the returned status back into a Numba
status so the kernel's exceptions reach the caller unchanged. An `@njit` entry
point wraps the intrinsic: it is callable from Python and from other @njit code.
"""
import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any

import llvmlite.binding as llvm
import numba
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.errors import TypingError
from numba.core.registry import cpu_target
from numba.extending import intrinsic

from .convention import returns_float
from .timings import stage

# LLVM's LoopLoadElimination, when it versions a loop under SCEV predicates, can leave a phi
# that does not dominate its uses: O3 turned a valid gradient into invalid IR (fuzz seed
# 2038001212, tests/regressions/test_fuzz_loop_load_elim_versioning.py). Without those
# predicates it still forwards stores to loads where no runtime check is needed. The option is
# process-wide, so Numba's compilation of other code loses only this versioning.
llvm.set_option("", "-loop-load-elimination-scev-check-threshold=0")


@dataclass(frozen=True)
class GradientSpec:
    """How to call one generated gradient.

    `argtypes`, `restype`: the kernel's Numba signature. `kinds`: per argument,
    "const", "dup" or "active". `name`: the gradient function's symbol, with
    the parameters documented in docs/internals.md. `dup_positions`,
    `active_positions`: the argument positions of each kind (derived).
    """
    argtypes: tuple
    restype: Any
    kinds: tuple
    name: str
    dup_positions: tuple = field(init=False)
    active_positions: tuple = field(init=False)

    def __post_init__(self):
        kinds = tuple(self.kinds)
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "dup_positions",
                           tuple(i for i, k in enumerate(kinds) if k == "dup"))
        object.__setattr__(self, "active_positions",
                           tuple(i for i, k in enumerate(kinds) if k == "active"))


def gradient_name(fn_name: str, argtypes, activity) -> str:
    """A symbol unique to (kernel, signature, activity)."""
    key = "|".join([fn_name, ",".join(map(str, argtypes)), ",".join(activity)])
    return "__enzyme_py_grad_" + hashlib.sha1(key.encode()).hexdigest()[:20]


@stage("verify")
def prepare_module(text: str, grad_name: str) -> str:
    """Give every defined function but `grad_name` (and its `.release`) internal linkage; verify.

    Internal helpers cannot clash with the same functions in other libraries. Functions and
    globals left unreferenced (the primal kernel, helpers inlined into the gradient) are
    dropped: O3 would drop them too, but only after optimizing each function on its own.
    Returns the verified module text; `compile_library` reuses the parsed module when
    given that very text (docs/performance.md, compile time).
    """
    module = llvm.parse_assembly(text)
    found = False
    for fn in module.functions:
        if fn.name == grad_name:
            found = not fn.is_declaration
        elif not fn.is_declaration and fn.name != grad_name + ".release":   # tape.py
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


@stage("O3 + codegen")
def compile_library(text: str, name: str):
    """Compile verified module text with Numba's codegen (O3) into a code library."""
    from numba.core.runtime import rtsys

    codegen = cpu_target.target_context.codegen()
    with global_compiler_lock:
        library = codegen.create_library(f"enzyme_py.{name}")
        library.enable_object_caching()     # as Numba does: keeps the object for disk_cache
        library.add_llvm_module(_parse_verified(text))
        library.add_linking_library(rtsys.library)     # NRT_incref & co.
        library.finalize()
    return library


def _param_names(spec: GradientSpec) -> list:
    """Parameter names of the entry and the intrinsic: primal, shadows, seed."""
    return ([f"a{i}" for i in range(len(spec.argtypes))]
            + [f"s{i}" for i in spec.dup_positions] + ["seed"])


def make_gradient_call(spec: GradientSpec, library):
    """An @intrinsic `f(*primal_args, *shadows, seed)` -> (status, excinfo, derivatives).

    It does not raise: `raise_status(status, excinfo)` does, after the arrays' last use, so
    Numba has released the references the entry holds (an error returned from inside an
    expression would skip those decrefs and leak the arrays' meminfos)."""
    out_type = types.Tuple([types.int32, types.voidptr,
                            types.Tuple([spec.argtypes[i] for i in spec.active_positions])])

    def typer(args):
        nargs = len(spec.argtypes)
        primal, shadows, seed = args[:nargs], args[nargs:-1], args[-1]
        if tuple(primal) != tuple(spec.argtypes):
            raise TypingError(
                f"this enzyme_py gradient was built for argument types "
                f"({_names(spec.argtypes)}), not ({_names(primal)}); build one "
                f"for these types with enzyme_py.compile_gradient")
        for i, sty in zip(spec.dup_positions, shadows):
            pty = spec.argtypes[i]
            if not isinstance(sty, types.Array) or \
                    (sty.dtype, sty.ndim) != (pty.dtype, pty.ndim):
                raise TypingError(f"the shadow of argument {i} must be an array "
                                  f"like {pty}, not {sty}")
        if not isinstance(seed, (types.Float, types.Integer)):
            raise TypingError(f"the seed must be a float, not {seed}")
        return out_type(*args), _codegen(spec, library)

    # Numba lowers `*args` of an intrinsic as one tuple: spell the params out.
    params = ", ".join(_param_names(spec))
    src = (f"def gradient_call(typingctx, {params}):\n"
           f"    return typer(({params},))\n")
    scope = {"typer": typer}
    exec(compile(src, f"<enzyme_py intrinsic {spec.name}>", "exec"), scope)
    return intrinsic(scope["gradient_call"])


def _names(numba_types) -> str:
    return ", ".join(str(t) for t in numba_types)


def _codegen(spec: GradientSpec, library):
    def codegen(context, builder, sig, llargs):
        nargs = len(spec.argtypes)
        call_conv = context.call_conv
        primal_fnty = call_conv.get_function_type(spec.restype, list(spec.argtypes))
        retptr = cgutils.alloca_once(builder, primal_fnty.args[0].pointee)
        builder.store(cgutils.get_null_value(retptr.type.pointee), retptr)
        excinfo = cgutils.alloca_once(builder, primal_fnty.args[1].pointee)
        builder.store(cgutils.get_null_value(excinfo.type.pointee), excinfo)
        flat = list(context.get_arg_packer(spec.argtypes).as_arguments(
            builder, llargs[:nargs]))
        shadows = _shadow_pointers(context, builder, spec, sig, llargs, retptr)
        outs = [_zeroed_slot(context, builder, spec.argtypes[i])
                for i in spec.active_positions]
        fnty = ir.FunctionType(ir.IntType(32), list(primal_fnty.args)
                               + [p.type for p in shadows + outs])
        fn = cgutils.get_or_insert_function(builder.module, fnty, spec.name)
        code = builder.call(fn, [retptr, excinfo] + flat + shadows + outs)
        status = call_conv._get_return_status(builder, code, builder.load(excinfo))
        with builder.if_then(builder.not_(status.is_error), likely=True):
            _release_return_value(context, builder, spec.restype, retptr)
        # No add_linking_library: the gradient is already loaded in Numba's JIT engine
        # (compile_library finalized it), so the call resolves by symbol. Linking a copy into
        # every caller would optimize and compile the whole gradient again.
        values = [builder.load(out) for out in outs]
        derivs = context.make_tuple(builder, sig.return_type.types[2], values)
        exc = builder.bitcast(builder.load(excinfo), cgutils.voidptr_t)
        return context.make_tuple(builder, sig.return_type, [code, exc, derivs])

    return codegen


def _shadow_pointers(context, builder, spec, sig, llargs, retptr):
    """Shadow pointers in parameter order: the seed slot for %retptr, then arrays."""
    nargs = len(spec.argtypes)
    pointers = []
    if returns_float(spec.restype):
        seed = context.cast(builder, llargs[-1], sig.args[-1], spec.restype)
        slot = cgutils.alloca_once(builder, retptr.type.pointee)
        builder.store(seed, slot)
        pointers.append(slot)
    for k, sty in enumerate(sig.args[nargs:-1]):
        ary = context.make_array(sty)(context, builder, value=llargs[nargs + k])
        pointers.append(ary.data)
    return pointers


def _zeroed_slot(context, builder, ty):
    slot = cgutils.alloca_once(builder, context.get_value_type(ty))
    builder.store(context.get_constant(ty, 0), slot)
    return slot


@intrinsic
def raise_status(typingctx, status, exc):
    """Raise the exception a gradient returned (status != 0), as the kernel would have."""
    def codegen(context, builder, sig, llargs):
        code, excptr = llargs
        call_conv = context.call_conv
        excinfo_type = call_conv.get_function_type(types.none, []).args[1].pointee
        status = call_conv._get_return_status(builder, code, builder.bitcast(excptr, excinfo_type))
        with cgutils.if_unlikely(builder, status.is_error):
            call_conv.return_status_propagate(builder, status)
        return context.get_dummy_value()
    return types.none(status, exc), codegen


def _release_return_value(context, builder, restype, retptr):
    """Drop the reference a non-float return value (e.g. an array) holds."""
    if returns_float(restype) or restype == types.none:
        return
    value = context.get_returned_value(builder, restype, builder.load(retptr))
    context.nrt.decref(builder, restype, value)


def compile_entry(entry, signature, convert: bool) -> None:
    """Compile `entry` for `signature` (the kernel's argument types as captured, then shadows,
    seeds or tangents). `convert`: capture resolved the call to a declared signature other than
    the values' own types (an explicit `@njit("f4(f4)")`); the entry then takes no other
    signature, so Numba converts the arguments to it as it does for the kernel."""
    entry.compile(tuple(signature))
    if convert:
        entry.disable_compile()


def make_entry(spec: GradientSpec, library):
    """The @njit entry `entry(*primal_args, *shadows, seed)` -> tuple of derivatives.

    The tuple holds one derivative per Active argument, in argument order. The
    shadows must have the strides of their arrays (autodiff checks this; callers
    from @njit code must ensure it). It releases the GIL.
    """
    params = ", ".join(_param_names(spec))
    src = (f"def entry({params}):\n"
           f"    status, exc, derivs = gradient_call({params})\n"
           f"    raise_status(status, exc)\n"
           f"    return derivs\n")
    scope = {"gradient_call": make_gradient_call(spec, library), "raise_status": raise_status}
    exec(compile(src, f"<enzyme_py entry {spec.name}>", "exec"), scope)
    fn = scope["entry"]
    fn.__qualname__ = f"entry_{spec.name}"   # a symbol of its own (disk_cache loads entries)
    return numba.njit(nogil=True)(fn)
