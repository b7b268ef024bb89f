"""`autodiff` and the annotations inside @njit code.

In @njit code, `Const(v)`, `Active(x)` (`Active(x, dx)` in forward mode), `Duplicated(a, da)`
and `DuplicatedNoNeed(a, da)` build small structs, and `autodiff(kernel, *args, mode=..., seed=...)`
is typed by building (or fetching) the gradient for the argument types at compile time; the call
then costs one call of the gradient. Annotations made in Python can also be passed to @njit code.

In reverse mode, when every argument is an array or a number, the call tests whether the
arrays and shadows share a byte: apart, it runs the gradient for arrays apart (what Python's
`autodiff` picks for them), else the variant that assumes nothing about overlaps, built on the
first such call (modes/lazy_entry.py). Other arguments (containers) and forward mode always take
the latter. Shapes and strides of shadows are checked when the call runs (a typed List's shadow
list: its length and each item's); shadows must not share memory with the primal arrays
(Python's `autodiff` checks that, @njit code does not).
"""
import inspect as _inspect

from numba import typeof
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.imputils import impl_ret_borrowed, lower_builtin, lower_constant
from numba.core.typing.templates import AbstractTemplate, infer_global, signature
from numba.extending import (NativeValue, models, make_attribute_wrapper, register_model,
                             type_callable, typeof_impl, unbox)

from ir_passes import Activity

from .annotations import Active, Const, Duplicated, DuplicatedNoNeed, Forward, Mode, Reverse
from .api import autodiff
from .bridge.convention import returns_float
from .bridge.restype import return_type
from .bridge.scratch import arrays_apart
from .modes.forward import forward_for_types
from .modes.lazy_entry import lazy_entry
from .modes.returns import ReturnPlan
from .modes.reverse import gradient_for_types, written_positions
from .modes.strong_zero_entry import checked_entry

_CLASSES = {"Const": Const, "Active": Active, "Duplicated": Duplicated,
            "DuplicatedNoNeed": DuplicatedNoNeed}


# ---- annotation types ----------------------------------------------------------------------

class AnnotationType(types.Type):
    """`kind(value[, extra])`: extra is the shadow (Duplicated*) or the tangent (Active)."""

    def __init__(self, kind, value, extra=None):
        self.kind, self.value, self.extra = kind, value, extra
        super().__init__(f"{kind}({value}" + (f", {extra})" if extra is not None else ")"))

    @property
    def key(self):
        return self.kind, self.value, self.extra

    @property
    def field(self):
        return "tangent" if self.kind == "Active" else "shadow"


@register_model(AnnotationType)
class AnnotationModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("value", fe_type.value)]
        if fe_type.extra is not None:
            members.append((fe_type.field, fe_type.extra))
        super().__init__(dmm, fe_type, members)


make_attribute_wrapper(AnnotationType, "value", "value")
make_attribute_wrapper(AnnotationType, "shadow", "shadow")
make_attribute_wrapper(AnnotationType, "tangent", "tangent")


def _register_constructor(kind, cls):
    @type_callable(cls)
    def typer(context):
        def typ(value, extra=None):
            if extra is not None and kind == "Const":
                return None
            if extra is None and kind.startswith("Duplicated"):
                return None
            return AnnotationType(kind, value, extra)
        return typ

    def lower(context, builder, sig, args):
        ty = sig.return_type
        ann = cgutils.create_struct_proxy(ty)(context, builder)
        ann.value = context.cast(builder, args[0], sig.args[0], ty.value)
        if len(args) > 1:
            setattr(ann, ty.field, context.cast(builder, args[1], sig.args[1], ty.extra))
        return impl_ret_borrowed(context, builder, ty, ann._getvalue())

    lower_builtin(cls, types.Any)(lower)
    lower_builtin(cls, types.Any, types.Any)(lower)

    @typeof_impl.register(cls)
    def typeof_annotation(val, c):
        extra = getattr(val, "tangent" if kind == "Active" else "shadow", None)
        return AnnotationType(kind, typeof(val.value, c.purpose),
                              None if extra is None else typeof(extra, c.purpose))


for _kind, _cls in _CLASSES.items():
    _register_constructor(_kind, _cls)


@unbox(AnnotationType)
def _unbox_annotation(typ, obj, c):
    ann = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    is_error = cgutils.alloca_once_value(c.builder, cgutils.false_bit)
    for name, fety in [("value", typ.value), (typ.field, typ.extra)]:
        if fety is None:
            continue
        attr = c.pyapi.object_getattr_string(obj, name)
        native = c.unbox(fety, attr)
        c.pyapi.decref(attr)
        setattr(ann, name, native.value)
        with c.builder.if_then(native.is_error):
            c.builder.store(cgutils.true_bit, is_error)
    return NativeValue(ann._getvalue(), is_error=c.builder.load(is_error))


# ---- mode markers ----------------------------------------------------------------------------

class ModeType(types.Dummy):
    def __init__(self, mode):
        self.mode = mode
        super().__init__(f"enzyme_py.{mode.name}")

    @property
    def key(self):
        return self.mode.name


register_model(ModeType)(models.OpaqueModel)


@typeof_impl.register(Mode)
def _typeof_mode(val, c):
    return ModeType(val)


@lower_constant(ModeType)
def _mode_constant(context, builder, ty, pyval):
    return context.get_dummy_value()


# ---- autodiff --------------------------------------------------------------------------------

_generated = {}   # folded argument types -> the Python body compiled for that call


@infer_global(autodiff)
class AutodiffTemplate(AbstractTemplate):
    """Types `autodiff(kernel, *args, mode=Reverse, seed=1.0)` in @njit code."""

    def generic(self, args, kws):
        kws = dict(kws)
        mode = kws.pop("mode", types.Omitted(Reverse))
        seed = kws.pop("seed", types.Omitted(1.0))
        if kws:
            raise TypingError(f"autodiff in @njit code takes mode= and seed=, not {sorted(kws)}")
        if not args or not isinstance(args[0], types.Dispatcher):
            raise TypingError("autodiff in @njit code needs an @njit kernel as its first argument"
                              + (f", not {args[0]}" if args else ""))
        folded = tuple(args) + (mode, seed)
        if folded not in _generated:
            _generated[folded] = _plan(args[0].dispatcher, args[1:], _mode_of(mode), seed)
        body, restype = _generated[folded]
        params = [_inspect.Parameter(n, _inspect.Parameter.POSITIONAL_OR_KEYWORD)
                  for n in ["kernel"] + [f"a{i}" for i in range(len(args) - 1)]]
        params += [_inspect.Parameter("mode", _inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                      default=Reverse),
                   _inspect.Parameter("seed", _inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                      default=1.0)]
        return signature(restype, *folded).replace(pysig=_inspect.Signature(params))


@lower_builtin(autodiff, types.VarArg(types.Any))
def _lower_autodiff(context, builder, sig, args):
    body, _ = _generated[tuple(sig.args)]
    return context.compile_internal(builder, body, sig, args)


def _mode_of(ty):
    if isinstance(ty, types.Omitted):
        return ty.value
    if isinstance(ty, ModeType):
        if ty.mode.with_primal:
            raise TypingError(f"{ty.mode!r} works from Python; in @njit code call the kernel "
                              f"for its value")
        return ty.mode
    raise TypingError(f"autodiff's mode must be enzyme_py.Reverse or enzyme_py.Forward, not {ty}")


def _kinds(anns, mode):
    """Per argument: (its Activity, Numba type of the value, shadow type)."""
    out = []
    for pos, ann in enumerate(anns):
        where = f"autodiff argument {pos + 1}"
        if not isinstance(ann, AnnotationType) or ann.kind == "Const":
            value = ann.value if isinstance(ann, AnnotationType) else ann
            out.append((Activity.CONST, value, None))
        elif ann.kind == "Active":
            if isinstance(ann.value, types.Array):
                raise TypingError(f"{where}: Active is for float scalars; for an array use "
                                  f"Duplicated(array, shadow) with a zeroed shadow")
            if not isinstance(ann.value, types.Float):
                raise TypingError(f"{where}: Active needs a float, not {ann.value}")
            if mode is Forward and ann.extra is None:
                raise TypingError(f"{where}: in forward mode Active(x, dx) carries a tangent")
            out.append((Activity.ACTIVE, ann.value, ann.extra))
        elif isinstance(ann.value, types.ListType):
            v, s = ann.value, ann.extra
            item = v.item_type
            if ann.kind != "Duplicated" or not isinstance(item, types.Array) or \
                    not isinstance(item.dtype, types.Float) or not item.mutable:
                raise TypingError(f"{where}: a typed List is differentiated as Duplicated(lst, "
                                  f"shadow_lst), its items writeable float arrays, not {ann.kind} "
                                  f"of {v}")
            if s != v:
                raise TypingError(f"{where}: the shadow must be a typed List like {v}, not {s}")
            out.append((Activity.DUP, v, s))
        else:
            v, s = ann.value, ann.extra
            if not isinstance(v, types.Array) or not isinstance(v.dtype, types.Float):
                raise TypingError(f"{where}: {ann.kind} is for float arrays, not {v}")
            if not isinstance(s, types.Array) or (s.dtype, s.ndim) != (v.dtype, v.ndim):
                raise TypingError(f"{where}: the shadow must be an array like {v}, not {s}")
            if not s.mutable:
                raise TypingError(f"{where}: the shadow is read-only")
            out.append((Activity.DUP, v, s))
    return out


def _plan(dispatcher, anns, mode, seed):
    """Build the gradient (or tangent function) and the body that calls it: (body, restype)."""
    _every_argument(dispatcher, len(anns))
    kinds = _kinds(anns, mode)
    argtypes = tuple(t for _, t, _ in kinds)
    shadow_types = tuple(s for k, _, s in kinds if k is Activity.DUP)
    names = [f"a{i}" for i in range(len(anns))]
    value = [f"{n}.value" if isinstance(a, AnnotationType) else n for n, a in zip(names, anns)]
    shadows = [f"{n}.shadow" for n, (k, _, _) in zip(names, kinds) if k is Activity.DUP]
    checks = [(_check_list if isinstance(t, types.ListType) else _check)(i, n)
              for i, (n, (k, t, _)) in enumerate(zip(names, kinds)) if k is Activity.DUP]
    alias = None
    if mode is Forward:
        _refuse_structured(dispatcher, argtypes)
        fkinds = tuple(k for k, _, _ in kinds)
        fwd = forward_for_types(dispatcher, argtypes, shadow_types, fkinds)
        tangents = [f"{n}.tangent" for n, (k, _, _) in zip(names, kinds) if k is Activity.ACTIVE]
        call = f"_, ts = entry({', '.join(value + shadows + tangents)})"
        floats = returns_float(fwd.spec.restype)
        result, restype = ("ts[0]", fwd.spec.value_type) if floats else ("None", types.none)
        entry = checked_entry(
            dispatcher, fwd.entry, len(argtypes), range(len(argtypes), len(argtypes) + len(shadows)),
            None, "d[1]", lambda: forward_for_types(dispatcher, argtypes, shadow_types, fkinds,
                                                    guarded=True).entry, fwd.spec.name)
    else:
        no_need = tuple(i for i, a in enumerate(anns)
                        if isinstance(a, AnnotationType) and a.kind == "DuplicatedNoNeed")
        _refuse_structured(dispatcher, argtypes)
        seed_value = repr(float(seed.value)) if isinstance(seed, types.Omitted) else "seed"
        if not isinstance(seed, (types.Omitted, types.Float, types.Integer)):
            raise TypingError(f"autodiff's seed must be a float, not {seed}")
        args = ", ".join(value + shadows + [seed_value])
        spans = _arrays(value, shadows, argtypes, shadow_types)
        call = _apart_call(spans, args) if spans else f"d = entry({args})"
        slots, restypes, n = [], [], 0
        for k, t, _ in kinds:
            slots.append(f"d[{n}]" if k is Activity.ACTIVE else "None")
            restypes.append(t if k is Activity.ACTIVE else types.none)
            n += k is Activity.ACTIVE
        result, restype = "(" + "".join(s + ", " for s in slots) + ")", types.Tuple(restypes)
        entry, alias = _reverse_entries(dispatcher, argtypes, shadow_types,
                                        tuple(k for k, _, _ in kinds), no_need, bool(spans))
    src = (f"def body(kernel, {', '.join(names + ['mode', 'seed'])}):\n"
           + "".join(f"    {c}\n" for c in checks)
           + f"    {call}\n    return {result}\n")
    scope = {"entry": entry, "alias": alias, "arrays_apart": arrays_apart}
    exec(compile(src, f"<enzyme_py njit autodiff of {dispatcher.py_func.__name__}>", "exec"), scope)
    return scope["body"], restype


def _reverse_entries(dispatcher, argtypes, shadow_types, kinds, no_need, apart):
    """(entry, alias): with `apart`, the checked entry of the gradient for arrays apart and a
    stand-in (lazy_entry.py) for the one that assumes nothing about overlaps; else the latter's
    checked entry and None."""
    n = len(argtypes)
    shadow_range = range(n, n + len(shadow_types))

    def guarded():
        return gradient_for_types(dispatcher, argtypes, shadow_types, kinds, no_need,
                                  guarded=True).entry

    def checked(disjoint):
        g = gradient_for_types(dispatcher, argtypes, shadow_types, kinds, no_need,
                               disjoint=disjoint)
        return checked_entry(dispatcher, g.entry, n, shadow_range, written_positions(g, n), "d",
                             guarded, g.spec.name)
    entry = checked(apart)
    if not apart:
        return entry, None
    sig = entry.signatures[0]
    return entry, lazy_entry(sig, entry.overloads[sig].signature.return_type,
                             lambda: checked(False), guarded, dispatcher.py_func.__name__)


def _arrays(values, shadows, argtypes, shadow_types):
    """(expression, Numba type) of every array the call passes (values, then shadows), when
    each argument is an array or a number: then its memory is those arrays' bytes, and the call
    can test that they are apart. Else None (a container may reach any memory)."""
    if not all(isinstance(t, (types.Array, types.Number, types.Boolean)) for t in argtypes):
        return None
    return [(v, t) for v, t in zip(values, argtypes) if isinstance(t, types.Array)] + \
        list(zip(shadows, shadow_types))


def _apart_call(spans, args):
    """Source lines calling `entry` when no two of the arrays `spans` share a byte, else
    `alias` (bridge/scratch.arrays_apart, emitted in place)."""
    arrays = "".join(f"{a}, " for a, _ in spans)
    return "\n    ".join([f"if arrays_apart(({arrays})):", f"    d = entry({args})", "else:",
                           f"    d = alias({args})"])


def _every_argument(dispatcher, n):
    """Inside @njit code every argument is passed, positionally (Python's autodiff also binds
    keywords and leaves defaults to Numba)."""
    sig = _inspect.signature(dispatcher.py_func)
    params = list(sig.parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params) or n == len(params):
        return
    raise TypingError(f"autodiff in @njit code passes every argument of the kernel, "
                      f"positionally: {dispatcher.py_func.__qualname__}{sig} takes "
                      f"{len(params)}, not {n} (defaults and keywords work from Python)")


def _refuse_structured(dispatcher, argtypes):
    """Inside @njit code a return value is seeded only when it is a float: an array or tuple
    return is refused (before anything is built), never left out silently."""
    restype = return_type(dispatcher, argtypes)
    if ReturnPlan.of(restype).kind == "structured":
        raise TypingError(f"autodiff in @njit code seeds a float return only; this kernel returns "
                          f"{restype}. Call autodiff from Python with seed= (array and tuple "
                          f"returns), or write the result into a Duplicated argument")


def _check(pos, name):
    where = f"autodiff argument {pos + 1}"
    return (f"if {name}.value.shape != {name}.shadow.shape or "
            f"{name}.value.strides != {name}.shadow.strides:\n"
            f"        raise ValueError('{where}: the shadow\\'s shape or strides differ from the "
            f"array\\'s; use np.zeros_like(x)')")


def _check_list(pos, name):
    """A typed List's shadow list: as long, each item shaped and strided as its item. (That no
    shadow shares memory with an item is the caller's promise, as for arrays.)"""
    where = f"autodiff argument {pos + 1}"
    v, s = f"{name}.value", f"{name}.shadow"
    return (f"if len({v}) != len({s}):\n"
            f"        raise ValueError('{where}: the shadow list\\'s length differs from the "
            f"list\\'s; give one shadow per item')\n"
            f"    for k in range(len({v})):\n"
            f"        if {v}[k].shape != {s}[k].shape or {v}[k].strides != {s}[k].strides:\n"
            f"            raise ValueError('{where}: a shadow item\\'s shape or strides differ "
            f"from its item\\'s; use np.zeros_like(item)')")
