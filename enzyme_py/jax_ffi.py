"""The primitives of enzyme_py.jax as XLA FFI custom calls (xla/ffi/api/c_api.h, API 0.3).

- `register(kernel)`: the kernel's plain call as a Numba `cfunc` handler that reads XLA's call
  frame, copies the operands (the kernel may write its arguments), zeroes or fills the outputs
  and calls the kernel on XLA's buffers. No Python runs on the call. It cannot report the
  kernel's exceptions to XLA: a kernel that raises needs `wrap(..., ffi=False)`.
- `register_python(name, host, ...)`: a Python function (the augmented forward sweep, forward
  mode, the reverse sweep, batched calls: they keep tapes in Python) as a ctypes handler that
  runs on NumPy views of XLA's buffers, its exceptions returned to XLA as errors. It skips
  jax.pure_callback's conversions of every operand and result.

Both answer XLA's metadata query (the API version, no traits) and act at the execute stage only.
"""
from __future__ import annotations

import ctypes
import itertools
import math

import jax
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_ids = itertools.count()

# byte offsets in c_api.h's structs on a 64-bit host
FRAME_EXTENSION, FRAME_STAGE, FRAME_ARGS, FRAME_RETS = 8, 32, 72, 112
EXTENSION_TYPE, METADATA_EXTENSION_METADATA, BUFFER_DATA = 8, 24, 24
EXTENSION_METADATA, STAGE_EXECUTE, API_MAJOR, API_MINOR = 1, 3, 0, 3

HANDLER = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
API_ERROR_CREATE, ERROR_UNKNOWN = 48, 2
_handlers: dict = {}        # target name -> the ctypes handler (kept alive)


class _ErrorArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("message", ctypes.c_char_p), ("errc", ctypes.c_int)]


@intrinsic
def load_word(typingctx, ptr, offset):
    """The 64-bit word at ptr + offset, as an integer."""
    def codegen(context, builder, sig, args):
        p = builder.gep(builder.bitcast(args[0], ir.IntType(8).as_pointer()), [args[1]])
        return builder.load(builder.bitcast(p, ir.IntType(64).as_pointer()))
    return types.uint64(types.voidptr, types.intp), codegen


@intrinsic
def load_int(typingctx, ptr, offset):
    def codegen(context, builder, sig, args):
        p = builder.gep(builder.bitcast(args[0], ir.IntType(8).as_pointer()), [args[1]])
        return builder.sext(builder.load(builder.bitcast(p, ir.IntType(32).as_pointer())), ir.IntType(64))
    return types.int64(types.voidptr, types.intp), codegen


def _store(bits):
    def store(typingctx, ptr, offset, value):
        def codegen(context, builder, sig, args):
            p = builder.gep(builder.bitcast(args[0], ir.IntType(8).as_pointer()), [args[1]])
            v = builder.trunc(args[2], ir.IntType(bits)) if bits < 64 else args[2]
            builder.store(v, builder.bitcast(p, ir.IntType(bits).as_pointer()))
            return context.get_dummy_value()
        return types.none(types.voidptr, types.intp, types.int64), codegen
    store.__name__ = f"store{bits}"
    return intrinsic(store)


store64, store32 = _store(64), _store(32)     # an integer stored at ptr + offset


@intrinsic
def call_pointer(typingctx, fn, arg):
    """Call the C function at address `fn` (one pointer argument, a pointer result)."""
    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(cgutils.voidptr_t, [cgutils.voidptr_t])
        f = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.ptrtoint(builder.call(f, [builder.inttoptr(args[1], cgutils.voidptr_t)]),
                                ir.IntType(64))
    return types.uint64(types.uint64, types.uint64), codegen


@intrinsic
def as_pointer(typingctx, word):
    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(types.uint64), codegen


def _buffer(table, i):
    """The data pointer of buffer i of an XLA_FFI_Args / XLA_FFI_Rets table."""
    return f"as_pointer(load_word(as_pointer(load_word({table}, {8 * i})), {BUFFER_DATA}))"


def handler_source(kernel) -> tuple:
    """The handler's source and its globals for a JaxKernel."""
    scope = {"kernel": kernel.dispatcher, "carray": numba.carray, "load_word": load_word,
             "load_int": load_int, "call_pointer": call_pointer, "store64": store64,
             "store32": store32, "as_pointer": as_pointer, "np": np}
    lines = [
        "def handler(frame):",
        f"    ext = load_word(frame, {FRAME_EXTENSION})",
        f"    if ext != 0 and load_int(as_pointer(ext), {EXTENSION_TYPE}) == {EXTENSION_METADATA}:",
        f"        md = as_pointer(load_word(as_pointer(ext), {METADATA_EXTENSION_METADATA}))",
        "        store64(md, 8, 24)",          # api_version.struct_size
        "        store64(md, 16, 0)",
        f"        store32(md, 24, {API_MAJOR})",
        f"        store32(md, 28, {API_MINOR})",
        "        store32(md, 32, 0)",          # traits
        "        store64(md, 40, 0)",          # state_type_id: unknown
        "        return 0",
        f"    if load_int(frame, {FRAME_STAGE}) != {STAGE_EXECUTE}:",
        "        return 0",
        f"    args = as_pointer(load_word(frame, {FRAME_ARGS}))",
        f"    rets = as_pointer(load_word(frame, {FRAME_RETS}))",
    ]
    names = []
    for pos, v in enumerate(kernel.examples):
        if isinstance(v, np.ndarray):
            scope[f"dt{pos}"] = v.dtype.type
            scope[f"sh{pos}"] = v.shape
        else:
            scope[f"v{pos}"] = v
        names.append(f"v{pos}")
    for i, pos in enumerate(kernel.operands):
        arg = f"carray({_buffer('args', i)}, sh{pos}, dt{pos})"
        if pos in kernel.outs:      # in place: the kernel works on the result buffer
            lines.append(f"    v{pos} = carray({_buffer('rets', kernel.outs.index(pos))}, sh{pos}, dt{pos})")
            lines.append(f"    v{pos}[...] = {arg}")
        else:
            lines.append(f"    v{pos} = {arg}.copy()")
    for i, pos in enumerate(kernel.outs):
        if pos not in kernel.operands:
            lines.append(f"    v{pos} = carray({_buffer('rets', i)}, sh{pos}, dt{pos})")
            lines.append(f"    v{pos}[...] = 0")
    call = f"kernel({', '.join(names)})"
    lines.append("    try:")
    if kernel.returns:
        scope["rdt"] = kernel.out_avals[-1].dtype.type
        lines.append(f"        carray({_buffer('rets', len(kernel.outs))}, (1,), rdt)[0] = {call}")
    else:
        lines.append(f"        {call}")
    # the kernel raised: an XLA error (the exception itself stays in compiled code)
    message = f"{kernel.name} raised an exception in its XLA FFI call; wrap it with ffi=False to " \
        f"see the exception".encode()
    error_args = _ErrorArgs(28, None, message, ERROR_UNKNOWN)
    kernel.ffi_error = (message, error_args)          # kept alive with the kernel
    scope["error_args"] = ctypes.addressof(error_args)
    lines += ["    except Exception:",
              f"        return call_pointer(load_word(as_pointer(load_word(frame, 16)), {API_ERROR_CREATE}), "
              "error_args)",
              "    return 0"]
    return "\n".join(lines) + "\n", scope


def register(kernel) -> str:
    """Compile the handler for a JaxKernel and register it with XLA; its target name."""
    source, scope = handler_source(kernel)
    exec(source, scope)
    cfunc = numba.cfunc(types.uint64(types.voidptr), nopython=True)(scope["handler"])
    name = f"enzyme_py_{kernel.name}_{next(_ids)}"
    jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(cfunc.ctypes), platform="cpu")
    kernel.ffi_handler = cfunc       # kept alive with the kernel
    return name


# ---- a Python function as an FFI handler ------------------------------------------------------

_ERROR_CREATE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_ErrorArgs))


def _word(address):
    return ctypes.c_uint64.from_address(address).value


def _int(address):
    return ctypes.c_int32.from_address(address).value


def _buffer_array(table, i, aval):
    """Buffer i of an args / rets table as a NumPy array over XLA's memory (no copy)."""
    data = _word(_word(table + 8 * i) + BUFFER_DATA)
    n = math.prod(aval.shape) * np.dtype(aval.dtype).itemsize
    if n == 0:
        return np.zeros(aval.shape, aval.dtype)
    return np.frombuffer((ctypes.c_char * n).from_address(data), dtype=aval.dtype).reshape(aval.shape)


def _metadata(ext):
    md = _word(ext + METADATA_EXTENSION_METADATA)
    ctypes.c_uint64.from_address(md + 8).value = 24
    ctypes.c_uint64.from_address(md + 16).value = 0
    ctypes.c_int32.from_address(md + 24).value = API_MAJOR
    ctypes.c_int32.from_address(md + 28).value = API_MINOR
    ctypes.c_uint32.from_address(md + 32).value = 0
    ctypes.c_int64.from_address(md + 40).value = 0


def _error(frame, exc):
    """An XLA_FFI_Error carrying the exception's message (XLA raises it in the caller)."""
    message = f"{type(exc).__name__}: {exc}".encode()
    args = _ErrorArgs(28, None, message, ERROR_UNKNOWN)
    create = _ERROR_CREATE(_word(_word(frame + 16) + API_ERROR_CREATE))
    return create(ctypes.byref(args))


def register_python(name, host, operand_avals, result_avals) -> str:
    """Register `host(*arrays) -> arrays` (NumPy, on XLA's buffers) as an FFI handler: a ctypes
    callback, without jax.pure_callback's conversions. Its exceptions become XLA errors."""
    def handler(frame):
        try:
            ext = _word(frame + FRAME_EXTENSION)
            if ext and _int(ext + EXTENSION_TYPE) == EXTENSION_METADATA:
                _metadata(ext)
                return None
            if _int(frame + FRAME_STAGE) != STAGE_EXECUTE:
                return None
            args, rets = _word(frame + FRAME_ARGS), _word(frame + FRAME_RETS)
            outs = host(*[_buffer_array(args, i, a) for i, a in enumerate(operand_avals)])
            for i, (o, a) in enumerate(zip(outs, result_avals)):
                _buffer_array(rets, i, a)[...] = o
            return None
        except BaseException as exc:     # every failure goes back to XLA as an error
            return _error(frame, exc)

    target = f"enzyme_py_{name}_{next(_ids)}"
    _handlers[target] = fn = HANDLER(handler)
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(fn), platform="cpu")
    return target
