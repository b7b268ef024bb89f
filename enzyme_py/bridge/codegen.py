"""Calling a generated function from Numba-generated code, with Numba's CPU calling convention:
the primal arguments flattened as Numba flattens them, %retptr and %excinfo, then the mode's
extra parameters; and turning the returned status back into the kernel's exception."""
from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic

from .convention import returns_float

CONTAINERS = (types.ListType, types.DictType)


def type_names(numba_types) -> str:
    """`float64, array(float64, 1d, C)`: for messages."""
    return ", ".join(str(t) for t in numba_types)


def status_type(result_type):
    """The type of an intrinsic that returns (status, excinfo, result)."""
    return types.Tuple([types.int32, types.voidptr, result_type])


def call_generated(context, builder, name, argtypes, restype, primal_args, extra, library):
    """Call generated function `name` with Numba's convention for the primal arguments
    (%retptr, %excinfo, flattened arguments) followed by `extra` LLVM values.

    Returns (retptr, status code, excinfo as void*). It does not raise: the entry raises with
    raise_status after the call, once Numba has released the arrays (entry.py).

    `library` (the generated function's) is not linked into the caller: compile_library
    finalized it, so it is loaded in Numba's JIT engine and the call resolves by symbol.
    Linking would copy the whole generated function into every caller, to be optimized and
    compiled again. `library` stays a parameter so that callers keep it alive with the entry."""
    call_conv = context.call_conv
    primal_fnty = call_conv.get_function_type(restype, list(argtypes))
    retptr = cgutils.alloca_once(builder, primal_fnty.args[0].pointee)
    builder.store(cgutils.get_null_value(retptr.type.pointee), retptr)
    excinfo = cgutils.alloca_once(builder, primal_fnty.args[1].pointee)
    builder.store(cgutils.get_null_value(excinfo.type.pointee), excinfo)
    flat = list(context.get_arg_packer(argtypes).as_arguments(builder, primal_args))
    fnty = ir.FunctionType(ir.IntType(32), list(primal_fnty.args) + [v.type for v in extra])
    fn = cgutils.get_or_insert_function(builder.module, fnty, name)
    code = builder.call(fn, [retptr, excinfo] + flat + list(extra))
    return retptr, code, builder.bitcast(builder.load(excinfo), cgutils.voidptr_t)


def float_slot(context, builder, ty, value=0.0):
    """A stack slot of Numba type `ty` holding `value`."""
    slot = cgutils.alloca_once(builder, context.get_value_type(ty))
    builder.store(context.get_constant(ty, value), slot)
    return slot


def array_data(context, builder, ty, value):
    """The data pointer of array `value` of Numba type `ty`."""
    return context.make_array(ty)(context, builder, value=value).data


def shadow_pointer(context, builder, ty, value):
    """The pointer a shadow of Numba type `ty` passes to a generated function: an array's data,
    a typed List's or Dict's object (its items are the shadows of the primal's items)."""
    if isinstance(ty, CONTAINERS):
        return context.make_helper(builder, ty, value=value).data
    return array_data(context, builder, ty, value)


def check_shadow_type(pos: int, primal, shadow) -> None:
    """TypingError unless `shadow` can be the shadow of an argument of type `primal`: an array
    of its dtype and ndim, or a typed List or Dict of the same type."""
    if isinstance(primal, CONTAINERS):
        ok = shadow == primal
    else:
        ok = isinstance(shadow, types.Array) and (shadow.dtype, shadow.ndim) == \
            (primal.dtype, primal.ndim)
    if not ok:
        raise TypingError(f"the shadow of argument {pos} must be "
                          f"{'a typed container' if isinstance(primal, CONTAINERS) else 'an array'}"
                          f" like {primal}, not {shadow}")


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


@intrinsic
def failed(typingctx, status, exc):
    """Whether a gradient's (status, excinfo) is an error raise_status would raise."""
    def codegen(context, builder, sig, llargs):
        code, excptr = llargs
        call_conv = context.call_conv
        excinfo_type = call_conv.get_function_type(types.none, []).args[1].pointee
        return call_conv._get_return_status(builder, code,
                                            builder.bitcast(excptr, excinfo_type)).is_error
    return types.boolean(status, exc), codegen


def release_return_value(context, builder, restype, retptr):
    """Drop the reference a non-float return value (e.g. an array) holds."""
    if returns_float(restype) or restype == types.none:
        return
    value = context.get_returned_value(builder, restype, builder.load(retptr))
    context.nrt.decref(builder, restype, value)
