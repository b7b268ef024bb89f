"""Forward mode in the Numba bridge: `autodiff(kernel, *args, mode=Forward)`.

The pipeline is reverse mode's (docs/internals.md) with `ir_passes.forward_mode` in place of
`reverse_mode`: capture, cleanup, forward mode, verify, Numba's O3, and an `@njit` entry

    entry(*primal_args, *shadows, *tangents) -> (value, (t_0, ..., t_{k-1}))

`shadows` are, per Duplicated argument in argument order, its k shadow arrays; `tangents`, per
Active argument, its k tangents; `value` is the kernel's float return value (0.0 when it returns
no float) and `t_j` the tangent of the return value in direction j. The entry can be called from
@njit code. Shadows enter holding the tangents of the arrays' initial contents and leave holding
the tangents of their final contents (docs/semantics.md).
"""
import hashlib
import re
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Optional

import numba
import numpy as np
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic

from .annotations import Active, BatchDuplicated, Const, Duplicated, DuplicatedNoNeed, as_annotation
from .capture import capture
from .cleanup import cleanup
from .vector_math import host_library
from .convention import array_extents, build_activity, data_params, returns_float
from .link import _names, _release_return_value, compile_entry, compile_library, prepare_module
from . import disk_cache

MAX_WIDTH = 16


@dataclass(frozen=True)
class ForwardSpec:
    """How to call one generated tangent function (see the module docstring)."""
    argtypes: tuple
    restype: Any
    kinds: tuple
    width: int
    name: str
    dup_positions: tuple = field(init=False)
    active_positions: tuple = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "kinds", tuple(self.kinds))
        object.__setattr__(self, "dup_positions", tuple(i for i, k in enumerate(self.kinds) if k == "dup"))
        object.__setattr__(self, "active_positions",
                           tuple(i for i, k in enumerate(self.kinds) if k == "active"))

    @property
    def value_type(self):
        return self.restype if returns_float(self.restype) else types.float64


@dataclass(frozen=True)
class CompiledForward:
    """A compiled tangent function: `entry` (see the module docstring), its spec and IR texts."""
    entry: Any
    spec: Optional[ForwardSpec]
    activity: tuple
    kernel_name: str
    captured: str = ""
    cleaned: str = ""
    generated: str = ""
    verified: str = ""
    error: Optional[BaseException] = None
    library: Any = None

    @property
    def width(self) -> int:
        return self.spec.width if self.spec else 0


def forward_differentiate(text, fn_name, activity, out_name, width=1, noalias=False,
                          extents=None, no_need=()) -> str:
    """Run ir_passes' forward mode on module `text`; return the new module text.

    noalias: every array and shadow of the call is memory of its own (shadows get `noalias`).
    extents: convention.array_extents of the argument types (stand-in shadows for Const arrays).
    no_need: parameter indices of DuplicatedNoNeed arrays' data pointers."""
    from ir_passes import forward_mode, parse_module, print_module
    from . import nrt  # noqa: F401 - Numba's allocators

    module = parse_module(text)
    forward_mode(module, fn_name, list(activity), out_name, width=width, noalias_shadows=noalias,
                 extents=extents, no_need=no_need, vector_library=host_library())
    return print_module(module)


def forward_name(fn_name, argtypes, activity, width) -> str:
    key = "|".join([fn_name, ",".join(map(str, argtypes)), ",".join(activity), str(width)])
    return "__enzyme_py_fwd_" + hashlib.sha1(key.encode()).hexdigest()[:20]


# ---- annotations -----------------------------------------------------------------------------

def split_forward_args(args):
    """Annotated arguments -> (annotations, kinds, width, shadows, tangents), validated.

    `shadows` is the flat list of shadow arrays (per Duplicated argument, its k shadows) and
    `tangents` the flat list of tangents (per Active argument, its k tangents)."""
    from .api import _check_duplicated
    annotated = [as_annotation(a) for a in args]
    width = None

    def agree(k, where):
        nonlocal width
        if width is None:
            width = k
        elif width != k:
            raise ValueError(f"{where}: {k} directions, but another argument has {width}; every "
                             f"differentiated argument needs the same number of directions")

    kinds, shadows, tangents = [], [], []
    for pos, a in enumerate(annotated):
        where = f"argument {pos}"
        if isinstance(a, Const):
            kinds.append("const")
        elif isinstance(a, Active):
            _check_active_forward(where, a)
            t = a.tangent if isinstance(a.tangent, (tuple, list)) else (a.tangent,)
            agree(len(t), where)
            for v in t:
                if not isinstance(v, (float, int, np.floating, np.integer)) or isinstance(v, bool):
                    raise TypeError(f"{where}: a tangent must be a float, got {type(v).__name__}")
            tangents.append([float(v) for v in t])
            kinds.append("active")
        else:
            lanes = tuple(a.shadows) if isinstance(a, BatchDuplicated) else (a.shadow,)
            if isinstance(a, BatchDuplicated) and not 1 <= len(lanes) <= MAX_WIDTH:
                raise ValueError(f"{where}: BatchDuplicated takes 1 to {MAX_WIDTH} shadows, got {len(lanes)}")
            agree(len(lanes), where)
            for s in lanes:
                _check_duplicated(where, a.value, s)
            _check_distinct_lanes(where, lanes)
            shadows.append(list(lanes))
            kinds.append("dup")
    width = width or 1
    return annotated, tuple(kinds), width, shadows, tangents


def _check_active_forward(where, a):
    from .api import _check_active
    _check_active(where, a.value)
    if a.tangent is None:
        raise TypeError(f"{where}: in forward mode an Active scalar needs its tangent: Active(x, dx) "
                        f"(or Active(x, (dx_1, ..., dx_k)) for k directions); Const(x) for none")
    if isinstance(a.tangent, (tuple, list)) and not 1 <= len(a.tangent) <= MAX_WIDTH:
        raise ValueError(f"{where}: 1 to {MAX_WIDTH} tangents, got {len(a.tangent)}")


def _check_distinct_lanes(where, lanes):
    for n, s in enumerate(lanes):
        for t in lanes[n + 1:]:
            if np.may_share_memory(s, t):
                raise ValueError(f"{where}: two of its shadows share memory; each direction needs "
                                 f"a shadow of its own")


def _check_aliasing_forward(annotated, shadows):
    """Shadows never alias primal memory; the same memory passed twice has the same shadows."""
    from .api import _same_shadow
    arrays = [(i, a.value) for i, a in enumerate(annotated) if isinstance(a.value, np.ndarray)]
    dups = [(i, a) for i, a in enumerate(annotated) if not isinstance(a, (Const, Active))]
    for (i, _), lanes in zip(dups, shadows):
        for s in lanes:
            for j, arr in arrays:
                if np.may_share_memory(s, arr):
                    raise ValueError(f"argument {i}: its shadow shares memory with the array of "
                                     f"argument {j}; shadows need memory of their own")
    for n, ((i, a), la) in enumerate(zip(dups, shadows)):
        for (j, b), lb in list(zip(dups, shadows))[n + 1:]:
            if np.may_share_memory(a.value, b.value):
                same = all(_same_shadow(Duplicated(a.value, s), Duplicated(b.value, t))
                           for s, t in zip(la, lb))
                if not same:
                    raise ValueError(f"arguments {i} and {j} are the same (or overlapping) memory "
                                     f"but have different shadows; pass the same shadows")


# ---- building and caching --------------------------------------------------------------------

_lock = threading.RLock()
_compiled = weakref.WeakKeyDictionary()   # dispatcher -> {key: CompiledForward}


def compile_forward(kernel, *args, keep_failure=False) -> CompiledForward:
    """Build (or fetch from the cache) the tangent function for these annotated arguments."""
    return _prepare(kernel, args, keep_failure)[0]


def forward_autodiff(kernel, *args):
    """autodiff(kernel, *args, mode=Forward): the tangent of the return value (a float; a tuple
    of k floats for k directions), or None when the kernel returns no float."""
    fwd, annotated, shadows, tangents = _prepare(kernel, args)
    primal = [a.value for a in annotated]
    _, ts = fwd.entry(*primal, *[s for lanes in shadows for s in lanes],
                      *[t for lanes in tangents for t in lanes])
    if not returns_float(fwd.spec.restype):
        return None
    return ts[0] if fwd.width == 1 and not _batched(annotated) else tuple(ts)


def forward_with_primal(kernel, *args):
    """(value, tangents) as the entry returns them: the kernel's float return value and the
    tuple of its k tangents."""
    fwd, annotated, shadows, tangents = _prepare(kernel, args)
    primal = [a.value for a in annotated]
    return fwd.entry(*primal, *[s for lanes in shadows for s in lanes],
                     *[t for lanes in tangents for t in lanes])


def _batched(annotated) -> bool:
    return any(isinstance(a, BatchDuplicated) or
               (isinstance(a, Active) and isinstance(a.tangent, (tuple, list))) for a in annotated)


def _prepare(kernel, args, keep_failure=False):
    from .api import _as_dispatcher, _type_key
    dispatcher = _as_dispatcher(kernel)
    annotated, kinds, width, shadows, tangents = split_forward_args(args)
    if "dup" in kinds:
        _check_aliasing_forward(annotated, shadows)
    disjoint = _all_disjoint(annotated, shadows)
    no_need = tuple(i for i, a in enumerate(annotated) if isinstance(a, DuplicatedNoNeed))
    key = (kinds, width, disjoint, no_need) + tuple(_type_key(i, a.value)
                                                    for i, a in enumerate(annotated))
    per_kernel = _compiled.get(dispatcher)
    fwd = per_kernel.get(key) if per_kernel is not None else None
    if fwd is None:
        with _lock:
            per_kernel = _compiled.setdefault(dispatcher, {})
            fwd = per_kernel.get(key)
            if fwd is None:
                from .api import _typeof
                argtypes = tuple(_typeof(i, a.value) for i, a in enumerate(annotated))
                shadow_types = tuple(numba.typeof(s) for lanes in shadows for s in lanes)
                fwd = _build(dispatcher, argtypes, shadow_types, kinds, width, keep_failure,
                             disjoint, no_need)
                if fwd.error is None:
                    per_kernel[key] = fwd
    return fwd, annotated, shadows, tangents


def _all_disjoint(annotated, shadows) -> bool:
    """Are all arrays and shadows of this call distinct memory? Then the variant whose shadows
    are `noalias` is used (LLVM keeps tangents in registers across stores)."""
    arrays = [a.value for a in annotated if type(a.value) is np.ndarray] + \
        [s for lanes in shadows for s in lanes]
    for n, x in enumerate(arrays):
        for y in arrays[n + 1:]:
            if np.may_share_memory(x, y):
                return False
    return True


def forward_for_types(dispatcher, argtypes, shadow_types, kinds, width=1) -> CompiledForward:
    """The (cached) tangent function for Numba argument types, as @njit callers see them: the
    variant that assumes nothing about how arrays and shadows overlap."""
    key = ("types", tuple(kinds), width, tuple(argtypes), tuple(shadow_types))
    with _lock:
        per_kernel = _compiled.setdefault(dispatcher, {})
        fwd = per_kernel.get(key)
        if fwd is None:
            fwd = per_kernel[key] = _build(dispatcher, tuple(argtypes), tuple(shadow_types),
                                           tuple(kinds), width, False)
    return fwd


def _build(dispatcher, argtypes, shadow_types, kinds, width, keep_failure,
           disjoint=False, no_need=()) -> CompiledForward:
    """`shadow_types`: the Numba types of the shadows, flat (per Duplicated argument, its k).
    `no_need`: positions of the DuplicatedNoNeed arguments."""
    tangent_types = (types.float64,) * (kinds.count("active") * width)
    slot = None if keep_failure else disk_cache.open_slot(     # docs/caching.md
        "forward", dispatcher, tuple(argtypes) + tuple(shadow_types) + tangent_types,
        (kinds, width, disjoint, no_need), make_forward_entry)
    if slot is not None and slot.hit:
        return CompiledForward(**slot.hit)
    cap = capture(dispatcher, argtypes)
    activity = build_activity(cap.argtypes, cap.restype, kinds)
    texts = {"captured": cap.text}
    try:
        texts["cleaned"] = cleanup(cap.text, cap.fn_name)
        name = forward_name(cap.fn_name, cap.argtypes, activity, width) + ("" if disjoint else "_alias")
        if no_need:
            name += "_noneed" + "_".join(map(str, no_need))
        if slot is not None:
            name = slot.symbol(name)
        texts["generated"] = forward_differentiate(texts["cleaned"], cap.fn_name, activity, name, width,
                                                   disjoint, array_extents(cap.argtypes),
                                                   data_params(cap.argtypes, no_need))
        texts["verified"] = prepare_module(texts["generated"], name)
        library = compile_library(texts["verified"], name)
        spec = ForwardSpec(cap.argtypes, cap.restype, kinds, width, name)
        entry = make_forward_entry(spec, library)
        compile_entry(entry, cap.argtypes + tuple(shadow_types) + tangent_types,
                      cap.argtypes != tuple(argtypes))
    except Exception as exc:
        if not keep_failure:
            raise
        return CompiledForward(entry=None, spec=None, activity=tuple(activity),
                               kernel_name=cap.fn_name, error=exc, **texts)
    fields = dict(entry=entry, spec=spec, activity=tuple(activity), kernel_name=cap.fn_name,
                  library=library)
    if slot is not None:
        slot.save(fields, texts["verified"])
    return CompiledForward(**fields, **texts)


# ---- the intrinsic and the entry -------------------------------------------------------------

def _param_names(spec: ForwardSpec) -> list:
    w = spec.width
    return ([f"a{i}" for i in range(len(spec.argtypes))]
            + [f"s{i}_{j}" for i in spec.dup_positions for j in range(w)]
            + [f"t{i}_{j}" for i in spec.active_positions for j in range(w)])


def make_forward_call(spec: ForwardSpec, library):
    """An @intrinsic `f(*primal_args, *shadows, *tangents)` -> (value, (t_0, ..., t_{k-1}))."""
    vt = spec.value_type
    out_type = status_type(types.Tuple([vt, types.UniTuple(vt, spec.width)]))
    nargs, nshadows = len(spec.argtypes), len(spec.dup_positions) * spec.width

    def typer(args):
        primal, shadows, tangents = args[:nargs], args[nargs:nargs + nshadows], args[nargs + nshadows:]
        if tuple(primal) != tuple(spec.argtypes):
            raise TypingError(
                f"this enzyme_py tangent function was built for argument types "
                f"({_names(spec.argtypes)}), not ({_names(primal)}); build one for these types "
                f"with enzyme_py.forward_entry")
        lanes = [i for i in spec.dup_positions for _ in range(spec.width)]
        for i, sty in zip(lanes, shadows):
            pty = spec.argtypes[i]
            if not isinstance(sty, types.Array) or (sty.dtype, sty.ndim) != (pty.dtype, pty.ndim):
                raise TypingError(f"the shadow of argument {i} must be an array like {pty}, not {sty}")
        for t in tangents:
            if not isinstance(t, (types.Float, types.Integer)):
                raise TypingError(f"a tangent must be a float, not {t}")
        return out_type(*args), _codegen(spec, library)

    params = ", ".join(_param_names(spec))
    src = f"def forward_call(typingctx, {params}):\n    return typer(({params},))\n"
    scope = {"typer": typer}
    exec(compile(src, f"<enzyme_py intrinsic {spec.name}>", "exec"), scope)
    return intrinsic(scope["forward_call"])


def call_generated(context, builder, name, argtypes, restype, primal_args, extra, library):
    """Call generated function `name` with Numba's convention for the primal arguments
    (%retptr, %excinfo, flattened arguments) followed by `extra` LLVM values.

    Returns (retptr, status code, excinfo as void*). It does not raise: the entry raises with
    link.raise_status after the call, once Numba has released the arrays (see link.py)."""
    from llvmlite import ir
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
    context.active_code_library.add_linking_library(library)
    return retptr, code, builder.bitcast(builder.load(excinfo), cgutils.voidptr_t)


def status_type(result_type):
    """The type of an intrinsic that returns (status, excinfo, result)."""
    return types.Tuple([types.int32, types.voidptr, result_type])


def njit_entry(call, params, label):
    """The @njit entry `entry(*params)` around an intrinsic returning (status, excinfo, result):
    it raises the kernel's exception, if any, then returns the result. It releases the GIL."""
    from .link import raise_status
    src = (f"def entry({params}):\n"
           f"    status, exc, out = call({params})\n"
           f"    raise_status(status, exc)\n"
           f"    return out\n")
    scope = {"call": call, "raise_status": raise_status}
    exec(compile(src, f"<enzyme_py {label}>", "exec"), scope)
    fn = scope["entry"]
    fn.__qualname__ = re.sub(r"\W", "_", label)   # a symbol of its own (disk_cache loads entries)
    return numba.njit(nogil=True)(fn)


def float_slot(context, builder, ty, value=0.0):
    """A stack slot of Numba type `ty` holding `value`."""
    slot = cgutils.alloca_once(builder, context.get_value_type(ty))
    builder.store(context.get_constant(ty, value), slot)
    return slot


def array_data(context, builder, ty, value):
    return context.make_array(ty)(context, builder, value=value).data


def _codegen(spec: ForwardSpec, library):
    def codegen(context, builder, sig, llargs):
        nargs, w = len(spec.argtypes), spec.width
        nshadows = len(spec.dup_positions) * w
        vt = spec.value_type
        slots = [float_slot(context, builder, vt) for _ in range(w)] if returns_float(spec.restype) else []
        pointers = slots + [array_data(context, builder, sty, llargs[nargs + k])
                            for k, sty in enumerate(sig.args[nargs:nargs + nshadows])]
        lanes = [i for i in spec.active_positions for _ in range(w)]
        values = [context.cast(builder, v, sty, spec.argtypes[i])
                  for i, v, sty in zip(lanes, llargs[nargs + nshadows:], sig.args[nargs + nshadows:])]
        retptr, code, exc = call_generated(context, builder, spec.name, spec.argtypes, spec.restype,
                                           llargs[:nargs], pointers + values, library)
        if returns_float(spec.restype):
            value = builder.load(retptr)
            ts = [builder.load(s) for s in slots]
        else:
            ok = builder.icmp_signed("==", code, code.type(0))
            with builder.if_then(ok, likely=True):
                _release_return_value(context, builder, spec.restype, retptr)
            value = context.get_constant(vt, 0.0)
            ts = [context.get_constant(vt, 0.0)] * w
        tup = context.make_tuple(builder, types.UniTuple(vt, w), ts)
        result = context.make_tuple(builder, sig.return_type.types[2], [value, tup])
        return context.make_tuple(builder, sig.return_type, [code, exc, result])

    return codegen


def make_forward_entry(spec: ForwardSpec, library):
    """The @njit entry (see the module docstring); it releases the GIL."""
    return njit_entry(make_forward_call(spec, library), ", ".join(_param_names(spec)),
                      f"forward entry {spec.name}")
