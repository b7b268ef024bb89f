"""The primitives of enzyme_py.jax as XLA FFI custom calls (xla/ffi/api/c_api.h, API 0.3).

- `register(kernel)`: the kernel's plain call as a Numba `cfunc` handler that reads XLA's call
  frame, copies the operands (the kernel may write its arguments), zeroes or fills the outputs
  and calls the kernel on XLA's buffers. No Python runs on the call. It cannot report the
  kernel's exceptions to XLA: a kernel that raises needs `wrap(..., ffi=False)`.
- `register_derivative(kernel, name)`: the unbatched augmented forward sweep, reverse sweep and
  forward mode as compiled handlers the same way: the forward sweep leaves its tape in the
  kernel's `Ring` (a fixed table of split-mode frames) and returns its handle as an int32 buffer,
  which the reverse sweep's handler looks up; no Python on either call.
- `register_python(name, host, ...)`: a Python function (batched calls, second derivatives) as
  a ctypes handler that runs on NumPy views of XLA's buffers, its exceptions returned to XLA as
  errors. It skips jax.pure_callback's conversions of every operand and result.

All answer XLA's metadata query (the API version, no traits) and act at the execute stage only.
"""
from __future__ import annotations

import ctypes
import itertools
import math
import weakref

import jax
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .annotations import Const, Duplicated, Forward
from .api import autodiff

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


# ---- the derivatives as compiled handlers: split mode's tapes in a ring per kernel -------------

@intrinsic
def fetch_add(typingctx, address, value):
    """Atomically add `value` to the 64-bit word at `address`; the old word."""
    def codegen(context, builder, sig, args):
        p = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        return builder.atomic_rmw("add", p, args[1], "seq_cst")
    return types.uint64(types.uint64, types.uint64), codegen


@intrinsic
def try_lock(typingctx, address):
    """Set the word at `address` from 0 to 1 atomically; whether it was 0."""
    def codegen(context, builder, sig, args):
        p = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        zero, one = ir.Constant(ir.IntType(64), 0), ir.Constant(ir.IntType(64), 1)
        return builder.extract_value(builder.cmpxchg(p, zero, one, "acquire", "monotonic"), 1)
    return types.boolean(types.uint64), codegen


@intrinsic
def unlock(typingctx, address):
    def codegen(context, builder, sig, args):
        p = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        builder.store_atomic(ir.Constant(ir.IntType(64), 0), p, "release", 8)
        return context.get_dummy_value()
    return types.none(types.uint64), codegen


class Ring:
    """The tapes of a kernel's newest `size` augmented forward calls: slot i of `slots` holds
    (handle, frame, lock); handle h lives in slot h % size until the call h + size (or one
    between) takes the slot, which parks the old frame for reuse. Its @njit functions (the
    handlers call them, and so does Python):

    - `aug(*args, *shadows) -> (value, handle)`: the forward sweep into the slot's frame;
    - `reverse(*args, *shadows, seed, handle) -> bool`: the reverse sweep from the tape, False
      when the tape was released;
    - `clear()`: free every frame."""

    def __init__(self, split, size):
        self.size = size
        self.slots = np.zeros((size, 3), np.uint64)
        self.next = np.zeros(1, np.uint64)
        nargs, ndup = len(split.spec.argtypes), len(split.spec.dup_positions)
        names = [f"a{i}" for i in range(nargs)] + [f"s{i}" for i in range(ndup)]
        scope = {"np": np, "carray": numba.carray, "as_pointer": as_pointer, "fetch_add": fetch_add,
                 "try_lock": try_lock, "unlock": unlock, "aug": split.aug, "rev": split.rev,
                 "reset": split.reset, "drop": split.drop, "SLOTS": self.slots.ctypes.data,
                 "NEXT": self.next.ctypes.data, "R": np.uint64(size)}
        lock = ["    lk = SLOTS + slot * np.uint64(24) + np.uint64(16)",
                "    while not try_lock(lk):", "        pass",
                "    ring = carray(as_pointer(SLOTS), (R, 3), np.uint64)"]
        src = [f"def ring_aug({', '.join(names)}):",
               "    handle = fetch_add(NEXT, np.uint64(1)) % np.uint64(2147483646) + np.uint64(1)",
               "    slot = handle % R", *lock,
               "    old = ring[slot, 1]", "    ring[slot, 0] = 0", "    ring[slot, 1] = 0", "    unlock(lk)",
               "    cell = np.empty(1, np.uintp)", "    cell[0] = old",
               "    if old != 0:", "        reset(old)",
               f"    value = aug({', '.join(names)}, cell)",
               "    while not try_lock(lk):", "        pass",
               "    if ring[slot, 1] != 0:", "        drop(ring[slot, 1])",
               "    ring[slot, 1] = cell[0]", "    ring[slot, 0] = handle", "    unlock(lk)",
               "    return value, np.int32(handle)",
               "",
               f"def ring_reverse({', '.join(names)}, seed, handle):",
               "    slot = np.uint64(handle) % R", *lock,
               "    if handle <= 0 or ring[slot, 0] != np.uint64(handle):",
               "        unlock(lk)", "        return False",
               f"    rev({', '.join(names)}, seed, ring[slot, 1])",
               "    unlock(lk)", "    return True",
               "",
               "def ring_clear():",
               "    for slot in range(R):", *["    " + line for line in lock],
               "        if ring[slot, 1] != 0:", "            drop(ring[slot, 1])",
               "        ring[slot, 0] = 0", "        ring[slot, 1] = 0", "        unlock(lk)"]
        exec("\n".join(src) + "\n", scope)
        self.aug, self.reverse, self.clear = (numba.njit(nogil=True)(scope[n])
                                              for n in ("ring_aug", "ring_reverse", "ring_clear"))
        self._finalizer = weakref.finalize(self, _clear, self.clear, self.slots)


def _clear(clear, slots):
    """Free a collected Ring's frames (`slots` kept alive until then)."""
    clear()


def _prologue():
    return [
        "def handler(frame):",
        f"    ext = load_word(frame, {FRAME_EXTENSION})",
        f"    if ext != 0 and load_int(as_pointer(ext), {EXTENSION_TYPE}) == {EXTENSION_METADATA}:",
        f"        md = as_pointer(load_word(as_pointer(ext), {METADATA_EXTENSION_METADATA}))",
        "        store64(md, 8, 24)", "        store64(md, 16, 0)",
        f"        store32(md, 24, {API_MAJOR})", f"        store32(md, 28, {API_MINOR})",
        "        store32(md, 32, 0)", "        store64(md, 40, 0)", "        return 0",
        f"    if load_int(frame, {FRAME_STAGE}) != {STAGE_EXECUTE}:", "        return 0",
        f"    args = as_pointer(load_word(frame, {FRAME_ARGS}))",
        f"    rets = as_pointer(load_word(frame, {FRAME_RETS}))",
    ]


def _error_return(kernel, scope, key, message):
    """Source returning an XLA error with a fixed message (kept alive with the kernel)."""
    error_args = _ErrorArgs(28, None, message.encode(), ERROR_UNKNOWN)
    kernel.ffi_errors[key] = (message.encode(), error_args)
    scope[f"error_{key}"] = ctypes.addressof(error_args)
    return (f"return call_pointer(load_word(as_pointer(load_word(frame, 16)), {API_ERROR_CREATE}), "
            f"error_{key})")


def derivative_source(kernel, name) -> tuple:
    """The source and globals of the compiled handler of `aug`, `reverse` or `tangent` (unbatched)
    for a JaxKernel whose `ring` and `dup` (the shadowed positions) are set."""
    k = kernel
    scope = {"carray": numba.carray, "load_word": load_word, "load_int": load_int,
             "call_pointer": call_pointer, "store64": store64, "store32": store32,
             "as_pointer": as_pointer, "np": np, "ring_aug": k.ring.aug, "ring_reverse": k.ring.reverse,
             "kernel": k.dispatcher}
    if not hasattr(k, "ffi_errors"):
        k.ffi_errors = {}
    lines = _prologue()
    for p, v in enumerate(k.examples):
        if isinstance(v, np.ndarray):
            scope[f"dt{p}"], scope[f"sh{p}"] = v.dtype.type, v.shape
        else:
            scope[f"v{p}"] = v
    if k.returns:
        scope["rdt"] = k.out_avals[-1].dtype.type
    n, first = len(k.operands), 1 if name in ("reverse", "tangent") else 0

    def arg(i, p):
        return f"carray({_buffer('args', first + i)}, sh{p}, dt{p})"

    def ret(i, p):
        return f"carray({_buffer('rets', i)}, sh{p}, dt{p})"

    raised = _error_return(k, scope, name, f"{k.name} raised an exception in its XLA FFI call "
                           f"({name}); wrap it with ffi=False to see the exception")
    if name in ("aug", "tangent"):      # the primal arguments: copies the kernel may write
        for p in range(len(k.kinds)):
            if p in k.operands and p in k.outs and name == "aug":
                lines += [f"    v{p} = {ret(k.outs.index(p), p)}", f"    v{p}[...] = {arg(k.operands.index(p), p)}"]
            elif p in k.operands:
                lines.append(f"    v{p} = {arg(k.operands.index(p), p)}.copy()")
            elif p in k.outs:
                lines.append(f"    v{p} = {ret(k.outs.index(p), p)}" if name == "aug" else
                             f"    v{p} = np.zeros(sh{p}, dt{p})")
                lines.append(f"    v{p}[...] = 0")
    call_args = ", ".join(f"v{p}" for p in range(len(k.kinds)))
    if name == "aug":
        lines += [f"    s{p} = np.zeros(sh{p}, dt{p})" for p in k.dup]
        shadows = ", ".join(f"s{p}" for p in k.dup)
        lines += ["    try:", f"        value, handle = ring_aug({call_args}, {shadows})",
                  "    except Exception:", f"        {raised}"]
        if k.returns:
            lines.append(f"    carray({_buffer('rets', len(k.outs))}, (1,), rdt)[0] = value")
        lines.append(f"    carray({_buffer('rets', len(k.out_avals))}, (1,), np.int32)[0] = handle")
    elif name == "tangent":
        dx = {p: arg(n + i, p) for i, p in enumerate(k.diff)}
        anns = []
        for p in range(len(k.kinds)):
            if p in k.outs:
                lines += [f"    t{p} = {ret(k.outs.index(p), p)}",
                          f"    t{p}[...] = {dx[p]}" if p in dx else f"    t{p}[...] = 0"]
            elif p in dx:
                lines.append(f"    t{p} = {dx[p]}.copy()")
            anns.append(f"Duplicated(v{p}, t{p})" if p in k.outs or p in dx else f"Const(v{p})")
        scope["forward"] = _forward_call(k, anns)
        tangents = [f"t{p}" for p in range(len(k.kinds)) if p in k.outs or p in dx]
        lines += ["    try:", f"        r = forward({call_args}, {', '.join(tangents)})",
                  "    except Exception:", f"        {raised}"]
        if k.returns:
            lines.append(f"    carray({_buffer('rets', len(k.outs))}, (1,), rdt)[0] = r")
    else:       # reverse: handle, operands, cotangents -> the differentiable inputs' cotangents
        lines.append(f"    handle = carray({_buffer('args', 0)}, (1,), np.int32)[0]")
        for p in range(len(k.kinds)):
            if p in k.operands:
                lines.append(f"    v{p} = {arg(k.operands.index(p), p)}")
            elif p in k.outs:
                lines.append(f"    v{p} = np.empty(sh{p}, dt{p})")
        ct = {p: arg(n + i, p) for i, p in enumerate(k.outs)}
        for p in k.dup:
            if p in k.diff:
                lines += [f"    s{p} = {ret(k.diff.index(p), p)}",
                          f"    s{p}[...] = {ct[p]}" if p in ct else f"    s{p}[...] = 0"]
            else:
                lines.append(f"    s{p} = {ct[p]}.copy()")
        seed = f"np.float64(carray({_buffer('args', 1 + n + len(k.outs))}, (1,), rdt)[0])" \
            if k.returns else "0.0"
        released = _error_return(k, scope, "released", RELEASED.format(name=k.name, size=k.ring.size))
        shadows = ", ".join(f"s{p}" for p in k.dup)
        lines += [f"    if not ring_reverse({call_args}, {shadows}, {seed}, handle):", f"        {released}"]
    lines.append("    return 0")
    return "\n".join(lines) + "\n", scope


RELEASED = ("{name}: the tape of this forward call was released (a wrapped kernel keeps the tapes "
            "of its newest {size} forward calls: wrap(..., max_tapes=)): run the forward call again")


def _forward_call(k, anns):
    """@njit forward(*kernel args, *tangents): forward mode of the kernel (autodiff in @njit)."""
    scope = {"autodiff": autodiff, "Duplicated": Duplicated, "Const": Const, "Forward": Forward,
             "kernel": k.dispatcher}
    dup = [p for p in range(len(k.kinds)) if p in k.outs or p in k.diff]
    params = [f"v{p}" for p in range(len(k.kinds))] + [f"t{p}" for p in dup]
    exec(f"def forward({', '.join(params)}):\n    return autodiff(kernel, {', '.join(anns)}, mode=Forward)\n",
         scope)
    return numba.njit(nogil=True)(scope["forward"])


def register_derivative(kernel, name) -> str:
    """Compile the handler of `aug`, `reverse` or `tangent` and register it with XLA."""
    source, scope = derivative_source(kernel, name)
    exec(source, scope)
    cfunc = numba.cfunc(types.uint64(types.voidptr), nopython=True)(scope["handler"])
    target = f"enzyme_py_{kernel.name}_{name}_{next(_ids)}"
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(cfunc.ctypes), platform="cpu")
    kernel.ffi_handlers = getattr(kernel, "ffi_handlers", []) + [cfunc]
    return target
