"""What each compiled overload froze: the global and closure values its compile read.

Numba reads a kernel's globals (and module attributes such as `cfg.K` or `pkg.sub.helper`)
while it compiles, and freezes them into the machine code: a later assignment does not
change what a plain call runs until the dispatcher recompiles. A private copy compiled from
`py_func` reads the values of today instead. So at import we wrap the CPU dispatcher's
`add_overload`: each overload gets a snapshot of the values its compile read (`Snapshot`).
Capture compiles its copy from a function rebuilt with those values (`frozen_function`),
and the disk cache keys a gradient by them (`digest`).

Adding an overload for a signature that a gradient was built for (`recompile()`, or the
first compile after a gradient was built from no overload) drops every in-memory gradient of
that dispatcher (the stores given to `register`).

A plain function the kernel calls (`register_jitable`) is compiled by Numba once per signature
and flags and reused; the copy (other flags) compiles it again from today's values, so a kernel
whose helper saw other values is refused. A plain function given to autodiff is jitted again
when a value it reads has changed (`jit_plain`, `current`): Python reads today's values.

An overload compiled before enzyme_py was imported takes its direct globals and closure
values from its Numba IR (`ir.Global`, `ir.FreeVar` in its type annotation); module attributes are not there, so
those are taken as they are now. One loaded from Numba's `cache=True` files is taken to have
frozen today's values: Numba's cache makes the same assumption (it checks the source file,
not the globals).
"""
import hashlib
import threading
import types as pytypes
import weakref

import numba
import numpy as np
from numba.core import ir
from numba.core.dispatcher import Dispatcher

from ..arguments import is_cuda

_ATTR = "_enzyme_py_frozen"        # on the dispatcher: {argtypes: Snapshot}
_MAX_DEPTH = 6
_stores = []                       # WeakKeyDictionary: dispatcher -> gradients
_attrs = []                        # dispatcher attributes holding gradients
_JIT_VALUES = "_enzyme_py_jit_values"   # on a dispatcher jit_plain made
_INNER = "<globals>"               # path step into a plain function's globals
_SCALARS = (bool, int, float, complex, str, bytes, type(None), np.generic)


class FrozenMismatch(TypeError):
    """The compiled overload froze values that a private copy cannot be built with."""


class Snapshot:
    """`values`: {path: value} where a path is ("g", name, attr...) for a global and its
    module attributes, ("c", i, attr...) for closure cell i; `source`: "compile", "ir"
    (no snapshot: taken from Numba's IR) or "cache" (Numba's cache)."""

    def __init__(self, values, source):
        self.values, self.source = values, source


def _frozen_value(v):
    """Arrays by copy (Numba makes a global array a constant); the rest as they are."""
    return v.copy() if isinstance(v, np.ndarray) else v


def same(a, b) -> bool:
    """Would Numba freeze `a` and `b` into the same code?"""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and a.tobytes() == b.tobytes())
    if isinstance(a, _SCALARS) and isinstance(b, _SCALARS):
        return type(a) is type(b) and (a == b or (a != a and b != b))
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a is b


def _names(code, out):
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            _names(c, out)
    return out


def _walk(value, path, names, out, depth):
    out[path] = _frozen_value(value)
    if depth >= _MAX_DEPTH:
        return
    if isinstance(value, pytypes.ModuleType):
        for n in sorted(names):
            if n in value.__dict__:
                _walk(value.__dict__[n], path + (n,), names, out, depth + 1)
    elif isinstance(value, pytypes.FunctionType):   # inlined by Numba: its globals are frozen too
        inner = _names(value.__code__, set())
        for n in sorted(inner):
            if n in value.__globals__ and value.__globals__[n] is not value:
                _walk(value.__globals__[n], path + (_INNER, n), inner, out, depth + 1)


def read(fn) -> dict:
    """{path: value} of what compiling `fn` reads now."""
    names = _names(fn.__code__, set())
    out = {}
    for n in sorted(names):
        if n in fn.__globals__:
            _walk(fn.__globals__[n], ("g", n), names, out, 0)
    for i, cell in enumerate(fn.__closure__ or ()):
        try:
            _walk(cell.cell_contents, ("c", i), names, out, 0)
        except ValueError:        # an empty cell
            pass
    return out


def _from_ir(fn, cres) -> dict:
    """Direct globals and closure values from an overload's Numba IR; the rest as now."""
    now = read(fn)
    blocks = getattr(getattr(cres, "type_annotation", None), "blocks", None)
    if not blocks:
        return now
    free = list(fn.__code__.co_freevars)
    for block in blocks.values():
        for inst in block.body:
            v = getattr(inst, "value", None)
            if isinstance(v, ir.FreeVar) and v.name in free:
                now[("c", free.index(v.name))] = _frozen_value(v.value)
            elif isinstance(v, ir.Global) and ("g", v.name) in now:
                now[("g", v.name)] = _frozen_value(v.value)
    return now


def snapshot(dispatcher, argtypes):
    """The Snapshot of `dispatcher`'s overload for `argtypes`, or None when it has none."""
    cres = dispatcher.overloads.get(tuple(argtypes))
    if cres is None:
        return None
    snap = dispatcher.__dict__.get(_ATTR, {}).get(tuple(argtypes))
    if snap is not None and snap[0] is cres:
        return snap[1]
    return Snapshot(_from_ir(dispatcher.py_func, cres), "ir")


def frozen_function(dispatcher, argtypes):
    """`dispatcher.py_func`, or a function rebuilt with the values its overload for
    `argtypes` froze where those differ from today's. Raises FrozenMismatch when it cannot
    be rebuilt (a module it read through is no longer a module)."""
    fn = dispatcher.py_func
    snap = snapshot(dispatcher, argtypes)
    if snap is None:
        return fn
    _check_helpers(fn, snap.values)
    now = read(fn)
    changed = [p for p, v in snap.values.items()
               if _INNER not in p and (p not in now or not same(now[p], v))]
    if not changed:
        return fn
    glb, cells = dict(fn.__globals__), list(fn.__closure__ or ())
    for path in sorted(changed, key=len):
        value = snap.values[path]
        if len(path) == 2 and path[0] == "g":
            glb[path[1]] = value
        elif len(path) == 2:
            cells[path[1]] = pytypes.CellType(value)
        else:
            parent = _stand_in(glb, cells, path[:-1], snap)
            setattr(parent, path[-1], value)
    return pytypes.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__,
                                tuple(cells) or None)


def jit_plain(fn):
    """numba.njit(fn), remembering the values `fn` reads now (see `current`)."""
    jitted = numba.njit(fn)
    jitted.__dict__[_JIT_VALUES] = read(fn)
    return jitted


def current(dispatcher) -> bool:
    """Did `dispatcher` (made by `jit_plain`) and each of its overloads see the values its
    function reads now?"""
    snaps = [snap.values for _, snap in dispatcher.__dict__.get(_ATTR, {}).values()]
    snaps.append(dispatcher.__dict__.get(_JIT_VALUES, {}))
    now = read(dispatcher.py_func)
    return all(p in now and same(now[p], v) for values in snaps
               for p, v in values.items() if _INNER not in p)


def _check_helpers(fn, values) -> None:
    """Refuse when a plain function the kernel calls (register_jitable) was compiled by Numba
    with values that differ from today's. Numba compiles such a helper once per signature and
    compile flags, when first used, and the copy (other flags) compiles it again from today's
    values: it cannot be given the old ones."""
    for v in values.values():
        if not isinstance(v, pytypes.FunctionType):
            continue
        now = read(v)
        for seen in _helper_values.get(v, ()):
            for path, old in seen.items():
                if path in now and not same(now[path], old):
                    raise FrozenMismatch(
                        f"enzyme_py cannot rebuild the code Numba compiled for "
                        f"{fn.__qualname__}: it calls {v.__qualname__}, which Numba compiled "
                        f"when {'.'.join(map(str, path[1:]))} held another value. A plain call "
                        f"runs the old value; restore it (or restart the process) to "
                        f"differentiate.")


def _stand_in(glb, cells, path, snap):
    """A module object standing in for the module at `path`, with the frozen attributes."""
    holder = glb if path[0] == "g" else None
    mod = glb[path[1]] if holder is not None else cells[path[1]].cell_contents
    if not getattr(mod, "_enzyme_py_stand_in", False):
        mod = _copy_module(mod)
        if holder is not None:
            glb[path[1]] = mod
        else:
            cells[path[1]] = pytypes.CellType(mod)
    for i, name in enumerate(path[2:]):
        child = getattr(mod, name)
        if not getattr(child, "_enzyme_py_stand_in", False):
            if not isinstance(child, pytypes.ModuleType):
                raise FrozenMismatch(f"{'.'.join(path[1:3 + i])} is no longer a module")
            child = _copy_module(child)
            setattr(mod, name, child)
        mod = child
    return mod


def _copy_module(mod):
    copy = pytypes.ModuleType(mod.__name__)
    copy.__dict__.update(mod.__dict__)
    copy._enzyme_py_stand_in = True
    return copy


def digest(dispatcher, argtypes, h, seen) -> None:
    """Feed the frozen values of an overload (what its code was compiled from) into `h`."""
    snap = snapshot(dispatcher, argtypes)
    values = snap.values if snap is not None else read(dispatcher.py_func)
    for path in sorted(values, key=repr):
        h.update(repr(path).encode())
        describe(values[path], h, seen)


def describe(value, h, seen) -> None:
    """Feed a frozen value into `h`: arrays and scalars by value, functions by code (and
    what they read), dispatchers by code and every overload's frozen values."""
    if isinstance(value, Dispatcher):
        h.update(b"D")
        if id(value) in seen:
            h.update(value.py_func.__qualname__.encode())
            return
        seen.add(id(value))       # its overloads' frozen values: see fingerprint's callers
        function_code(value.py_func, h)
        h.update(repr(sorted(map(repr, value.targetoptions.items()))).encode())
    elif isinstance(value, pytypes.FunctionType):     # its values are in the snapshot
        h.update(b"F")
        function_code(value, h)
    elif isinstance(value, pytypes.ModuleType):
        h.update(b"M" + value.__name__.encode())
    elif isinstance(value, np.ndarray):
        h.update(repr((value.dtype.str, value.shape)).encode() + value.tobytes())
    elif isinstance(value, _SCALARS):
        h.update(repr((type(value).__name__, value)).encode())
    elif isinstance(value, tuple):
        h.update(f"({type(value).__qualname__}".encode())
        for v in value:
            describe(v, h, seen)
        h.update(b")")
    else:
        t = type(value)
        h.update(f"<{t.__module__}.{t.__qualname__}>".encode())


def function_code(fn, h) -> None:
    """Name, bytecode, names and constants of `fn` and its nested code objects."""
    h.update(f"{fn.__module__}.{fn.__qualname__}".encode())
    _code(fn.__code__, h)
    h.update(repr(fn.__defaults__).encode())


def _code(code, h):
    h.update(code.co_code)
    h.update(repr((code.co_name, code.co_names, code.co_varnames, code.co_freevars,
                   code.co_cellvars, code.co_argcount, code.co_kwonlyargcount)).encode())
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            _code(c, h)
        elif isinstance(c, frozenset):
            h.update(repr(sorted(map(repr, c))).encode())
        else:
            h.update(repr(c).encode())


def fingerprint(dispatcher, argtypes) -> bytes:
    """A digest of the overload's code and everything it froze (a callee dispatcher by its
    code: disk_cache adds the fingerprint of each callee overload)."""
    h, seen = hashlib.sha256(), set()
    describe(dispatcher, h, seen)
    h.update(repr(tuple(argtypes)).encode())
    digest(dispatcher, argtypes, h, seen)
    return h.digest()


# ---- following the dispatcher ------------------------------------------------------------------

def register(store):
    """Drop `store[dispatcher]` when the dispatcher recompiles a signature gradients use."""
    _stores.append(store)
    return store


def register_attr(name):
    """The same for a dispatcher attribute."""
    _attrs.append(name)
    return name


_used = weakref.WeakKeyDictionary()   # dispatcher -> {argtypes gradients were built for: values}
_adopted = weakref.WeakKeyDictionary()   # dispatcher -> {argtypes: first overload, same values}
_helper_values = weakref.WeakKeyDictionary()   # py_func -> [values read at each of its compiles]


def note_use(dispatcher, argtypes) -> None:
    """A gradient is built for `argtypes`: a later overload for them invalidates it, unless it
    is the first one and compiled from the values the gradient's copy was compiled from now
    (recorded here when the kernel has no overload for `argtypes` yet)."""
    argtypes = tuple(argtypes)
    uses = _used.setdefault(dispatcher, {})
    if argtypes in uses:
        return
    values = None
    if argtypes not in dispatcher.overloads and isinstance(dispatcher.py_func, pytypes.FunctionType):
        try:
            values = read(dispatcher.py_func)
        except Exception:     # noqa: BLE001 - unreadable: any overload invalidates
            values = None
    uses[argtypes] = values


def adopted(dispatcher, argtypes):
    """The overload Numba compiled for `argtypes` after a gradient was built for them from the
    same values (the gradient stays valid for it), or None."""
    return _adopted.get(dispatcher, {}).get(tuple(argtypes))


def _same_values(a, b) -> bool:
    return a is not None and b is not None and a.keys() == b.keys() and \
        all(same(a[p], b[p]) for p in a)


def forget_gradients(dispatcher) -> None:
    for store in _stores:
        store.pop(dispatcher, None)
    for name in _attrs:
        dispatcher.__dict__.pop(name, None)


def _from_cache(cres) -> bool:
    """Numba's cache gives its overloads no type annotation (a string in its place)."""
    return not hasattr(getattr(cres, "type_annotation", None), "blocks")


def install_hook():
    """Wrap Dispatcher.add_overload to snapshot each overload (idempotent)."""
    original = Dispatcher.add_overload
    if getattr(original, "_enzyme_py_hook", False):
        return

    def add_overload(self, cres):
        args = tuple(cres.signature.args)
        uses = _used.get(self, {})
        replaced = args in self.overloads or args in uses
        try:
            values = read(self.py_func)
        except Exception:         # noqa: BLE001 - no snapshot: capture reads Numba's IR
            values = None
        if replaced and args not in self.overloads and not _from_cache(cres) \
                and _same_values(uses[args], values):
            # The first overload, compiled from the values the gradients' copy was: the same
            # code (an overload from Numba's cache may hold older values: not adopted).
            replaced = False
            _adopted.setdefault(self, {})[args] = cres
        original(self, cres)
        if values is not None and isinstance(self.py_func, pytypes.FunctionType):
            _helper_values.setdefault(self.py_func, []).append(values)
        if values is not None:
            snap = Snapshot(values, "cache" if _from_cache(cres) else "compile")
            self.__dict__.setdefault(_ATTR, {})[args] = (cres, snap)
        if replaced:
            forget_gradients(self)

    def recompile(self):
        forget_gradients(self)
        recompile_original(self)

    recompile_original = Dispatcher.recompile
    add_overload._enzyme_py_hook = True
    Dispatcher.add_overload = add_overload
    Dispatcher.recompile = recompile


install_hook()


_lock = threading.RLock()
_jitted = weakref.WeakKeyDictionary()      # plain function -> its njit dispatcher


def as_dispatcher(kernel) -> Dispatcher:
    """`kernel` as a Numba dispatcher: an @njit function, or a plain function jitted once."""
    if isinstance(kernel, Dispatcher):
        return kernel
    if isinstance(kernel, pytypes.FunctionType):
        jitted = _jitted.get(kernel)
        if jitted is None or not current(jitted):   # Python reads today's globals
            with _lock:
                jitted = _jitted[kernel] = jit_plain(kernel)
        return jitted
    if is_cuda(kernel):
        raise TypeError("this takes @njit kernels; a CUDA kernel launch kernel[blocks, threads] "
                        "goes to autodiff, compile_gradient, inspect or explain (docs/cuda.md)")
    raise TypeError(
        f"autodiff needs a Numba @njit function or a plain Python function, "
        f"not {type(kernel).__name__}")
