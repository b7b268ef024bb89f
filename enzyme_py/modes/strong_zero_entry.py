"""The strong zero for gradients called from compiled code (`autodiff` inside @njit,
`compile_gradient(...).entry`): strong_zero.py's snapshot, check and guarded rerun, compiled.

`checked_entry` wraps a generated entry in an @njit function of the same parameters: it copies
the shadows and the arrays the kernel may write, runs the unguarded entry, and when a shadow or
a returned derivative holds an inf or NaN it puts the arrays back and runs the guarded variant
(every product under the strong zero). The guarded variant is built the first time a call needs
it, from Python (an object-mode block, entered only then). An argument whose memory the entry
cannot copy (a typed List, a record, a jitclass) makes the entry call the guarded variant
straight away, built with the entry. Code calling a checked entry is differentiated as calling
the guarded variant straight (bridge/capture.capture_as): AD cannot follow the copies and the
object-mode block.
"""
from __future__ import annotations

import cmath
import dataclasses
import threading
import warnings
import weakref

import numba
from numba.core import types
from numba.core.errors import NumbaWarning

from . import strong_zero
from .. import disk_cache
from ..bridge.capture import capture_as
from ..bridge.codegen import failed
from ..bridge.convention import arg_layouts
from ..bridge.frozen import as_dispatcher
from ..bridge.scratch import all_finite, from_flat, scratch_like, to_flat
from .reverse import written_positions

_IMMUTABLE = (types.Number, types.Boolean, types.NoneType, types.Omitted, types.EnumMember,
              types.NPDatetime, types.NPTimedelta, types.UnicodeType, types.StringLiteral,
              types.Dummy)
_checked = weakref.WeakKeyDictionary()     # entry -> its checked entry
_lock = threading.Lock()


class _Plan:
    """Source lines of the snapshot and the check, or `copyable` False."""

    def __init__(self):
        self.copies, self.restores, self.tests = [], [], []
        self.copyable = True

    def snapshot(self, name: str, ty) -> None:
        """Copy the memory `name` (of Numba type `ty`) holds, or mark the plan not copyable."""
        if isinstance(ty, types.Array):
            if ty.mutable:
                copy = f"c{len(self.copies)}"
                self.copies.append(f"{copy} = scratch_like({name})")
                self.copies.append(f"to_flat({copy}, {name})")
                self.restores.append(f"from_flat({name}, {copy})")
        elif isinstance(ty, types.BaseTuple):
            for k, item in enumerate(ty):
                self.snapshot(f"{name}[{k}]", item)
        elif not isinstance(ty, _IMMUTABLE):
            self.copyable = False

    def finite(self, name: str, ty) -> None:
        """Test that the derivatives `name` holds are finite."""
        if isinstance(ty, types.Array):
            if isinstance(ty.dtype, (types.Float, types.Complex)):
                self.tests.append(f"all_finite({name})")
        elif isinstance(ty, types.BaseTuple):
            for k, item in enumerate(ty):
                self.finite(f"{name}[{k}]", item)
        elif isinstance(ty, (types.Float, types.Complex)):
            self.tests.append(f"cmath.isfinite({name})")


def checked_entry(kernel, entry, nvalues: int, shadows: range, written, derivs: str,
                  guarded, label: str, lazy: bool = True):
    """The @njit entry running `entry` (compiled for one signature: values, then the extras
    from `shadows` on, e.g. shadows and a seed) under the strong zero.

    `shadows`: parameter positions of the shadows (snapshot and checked). `written`: value
    positions the kernel may write (None: any). `derivs`: a Python expression over `d`, the
    entry's result, naming the derivatives to check (e.g. "d" or "d[1]"). `guarded()`: the
    guarded variant's entry (same signature). `lazy`: built on the first call that needs it
    (through an object-mode block); else built now and called directly (no Python on any path:
    a @njit(cache=True) caller can be cached)."""
    with _lock:
        compiled = _checked.get(entry)
        if compiled is None or compiled[0] != lazy:
            compiled = _checked[entry] = (lazy, _build(kernel, entry, nvalues, shadows, written,
                                                       derivs, guarded, label, lazy))
    return compiled[1]


def _build(kernel, entry, nvalues, shadows, written, derivs, guarded, label, lazy):
    sig = entry.signatures[0]
    params = [f"p{i}" for i in range(len(sig))]
    plan = _Plan()
    for i in range(nvalues):
        if written is None or i in written:
            plan.snapshot(params[i], sig[i])
    for i in shadows:
        plan.snapshot(params[i], sig[i])
        plan.finite(params[i], sig[i])
    restype = entry.overloads[sig].signature.return_type
    plan.finite(derivs, _derivs_type(restype, derivs))
    names = ", ".join(params)
    inner = entry.py_func.__globals__       # the entry's intrinsic and raise (bridge/entry.py)
    scope = {"call": inner["call"], "raise_status": inner["raise_status"], "failed": failed,
             "scratch_like": scratch_like, "to_flat": to_flat, "from_flat": from_flat,
             "all_finite": all_finite, "cmath": cmath, "numba": numba}
    if not plan.copyable:
        body = [f"return guarded({names})"]
        scope["guarded"] = guarded()
    else:
        # The kernel's exception is raised in a block of its own, where the copies are dead:
        # Numba releases them there (an error raised by a call would skip those decrefs).
        body = [*plan.copies, f"status, exc, d = call({names})", "if failed(status, exc):",
                "    raise_status(status, exc)", "    return d",
                f"if {' and '.join(plan.tests) or 'True'}:", "    return d", *plan.restores]
        if lazy:
            body += ["with numba.objmode(r=RESTYPE):", f"    r = rerun({names})", "return r"]
            scope.update(RESTYPE=restype, rerun=_Lazy(kernel, guarded, sig))
        else:
            body += [f"return guarded({names})"]
            scope["guarded"] = guarded()
    src = f"def checked({names}):\n" + "".join(f"    {line}\n" for line in body)
    exec(compile(src, f"<enzyme_py strong zero {label}>", "exec"), scope)
    fn = scope["checked"]
    fn.__qualname__ = f"checked_{label}"
    compiled = numba.njit(nogil=True, no_cfunc_wrapper=True)(fn)
    # stored beside the gradients it calls when both were stored (no Python object inside)
    keys = None if lazy else [disk_cache.entry_key(e) for e in (entry, scope.get("guarded"))]
    stored = keys is not None and None not in keys
    parts = (keys, src, str(sig))
    if not (stored and disk_cache.load_entry("checked", parts, compiled)):
        with warnings.catch_warnings():     # the object-mode block holds the GIL: the rare path
            warnings.simplefilter("ignore", NumbaWarning)
            compiled.compile(sig)
        if stored:
            disk_cache.store_entry("checked", parts, compiled)
    compiled.disable_compile()
    compiled.unchecked = entry      # the gradient alone: no copies, no check (docs/semantics.md)
    capture_as(compiled, sig, substitute_guarded(len(sig), scope.get("guarded"), guarded))
    _pickle_as_keys(compiled, entry, scope.get("guarded"))
    return compiled


def substitute_guarded(n: int, built, guarded):
    """What a capture links for a checked entry: `built` (the guarded entry, when built with the
    entry; then `guarded`, which may hold the caller's arrays, is not kept) or `guarded()`,
    called straight."""
    source = (lambda: built) if built is not None else guarded
    made = []

    def substitute():
        if not made:        # once: every capture of a caller links the same function
            made.append(_straight(n, source()))
        return made[0]
    return substitute


def _straight(n: int, guarded):
    """@njit(p0, ..., p{n-1}): guarded(...). What code calling a checked entry is differentiated
    as (bridge/capture.capture_as): the guarded variant gives the entry's derivatives, in code AD
    can follow (not the entry's copies and object-mode rerun)."""
    names = ", ".join(f"p{i}" for i in range(n))
    scope = {"guarded": guarded}
    exec(f"def straight({names}):\n    return guarded({names})\n", scope)
    return numba.njit(nogil=True, no_cfunc_wrapper=True)(scope["straight"])


def _pickle_as_keys(compiled, entry, guarded) -> None:
    """A checked entry over two entries that pickle as their disk-cache keys pickles as those
    keys (a @njit(cache=True) driver closing over it is then cached; disk_cache.pickle_by_key)."""
    if guarded is None:
        return
    keys = [disk_cache.entry_key(e) for e in (entry, guarded)]
    if None not in keys:
        compiled.__reduce_ex__ = lambda protocol: (loaded_checked_entry, tuple(keys))


def loaded_checked_entry(key, guarded_key):
    """The checked entry over the gradients with these keys, loaded or built in this process."""
    found = _checked.get(disk_cache.loaded_entry(key))
    if found is None or found[0]:
        raise LookupError("this enzyme_py gradient is not loaded in this process: build it "
                          "(compile_gradient) before unpickling what refers to it")
    return found[1]


def _derivs_type(restype, derivs: str):
    """The Numba type of `derivs` ("d" or "d[k]") in a result of type `restype`."""
    if derivs == "d":
        return restype
    return restype[int(derivs[2:-1])]


class _Lazy:
    """rerun(*args): the guarded variant's compiled code for `sig`, built on first call."""

    def __init__(self, kernel, guarded, sig):
        self.kernel, self.guarded, self.sig = kernel, guarded, sig
        self.lock = threading.Lock()
        self.run = None

    def __call__(self, *args):
        if self.run is None:
            with self.lock:
                if self.run is None:
                    # The exact overload: values boxed out of compiled code may type differently
                    # (a contiguous 'A' array comes back as 'C'); its wrapper unboxes them as
                    # the compiled code saw them.
                    self.run = self.guarded().overloads[self.sig].entry_point
        strong_zero.count(as_dispatcher(self.kernel))
        return self.run(*args)


def checked_gradient(kernel, grad, guarded):
    """`grad` (a CompiledGradient) with its entry checked; `guarded()`: the guarded variant's
    CompiledGradient, built now (compile_gradient's entry may be called from a cached @njit
    driver, where no Python runs)."""
    n = len(grad.spec.argtypes)
    entry = checked_entry(kernel, grad.entry, n, range(n, n + len(grad.spec.dup_positions)),
                          written_positions(grad, n), "d", lambda: guarded().entry,
                          grad.spec.name, lazy=False)
    return dataclasses.replace(grad, entry=entry)


def checked_forward(kernel, fwd, guarded):
    """`fwd` (a CompiledForward) with its entry checked (checked_gradient)."""
    n, spec = len(fwd.spec.argtypes), fwd.spec
    entry = checked_entry(kernel, fwd.entry, n, range(n, n + len(spec.dup_positions) * spec.width),
                          None, "d[1]", lambda: guarded().entry, spec.name, lazy=False)
    return dataclasses.replace(fwd, entry=entry)


def checked_batched(kernel, compiled, guarded):
    """`compiled` (a CompiledBatched) with its entry checked (checked_gradient); the scratch
    arrays and shadow lanes are its shadows."""
    n, spec = len(compiled.spec.argtypes), compiled.spec
    shadows = range(n, n + len(spec.dup_positions) * (1 + spec.width))
    written = compiled.written
    if written is not None:
        written = tuple(pos for pos, lay in enumerate(arg_layouts(spec.argtypes))
                        if not written.isdisjoint(lay.params))
    entry = checked_entry(kernel, compiled.entry, n, shadows, written, "d",
                          lambda: guarded().entry, spec.name, lazy=False)
    return dataclasses.replace(compiled, entry=entry)
