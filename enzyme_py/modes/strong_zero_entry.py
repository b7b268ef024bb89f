"""The strong zero for gradients called from compiled code (`autodiff` inside @njit,
`compile_gradient(...).entry`): strong_zero.py's snapshot, check and guarded rerun, compiled.

`checked_entry` wraps a generated entry in an @njit function of the same parameters: it copies
the shadows and the arrays the kernel may write, runs the unguarded entry, and when a shadow or
a returned derivative holds an inf or NaN it puts the arrays back and runs the guarded variant
(every product under the strong zero). The guarded variant is built the first time a call needs
it, from Python (an object-mode block, entered only then). An argument whose memory the entry
cannot copy (a typed List, a record, a jitclass) makes the entry call the guarded variant
straight away, built with the entry.
"""
from __future__ import annotations

import cmath
import threading
import warnings
import weakref

import numba
from numba.core import types
from numba.core.errors import NumbaWarning

from . import strong_zero
from ..bridge.frozen import as_dispatcher

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
                self.copies.append(f"{copy} = {name}.copy()")
                self.restores.extend(_copy_back(name, copy, ty.ndim))
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


def _copy_back(name: str, copy: str, ndim: int) -> list:
    """Lines writing array `copy` back into `name` element by element (`name[...] = copy`
    costs seconds of Numba compile per layout)."""
    index = ", ".join(f"i{k}" for k in range(ndim)) or "()"
    return ([" " * 4 * k + f"for i{k} in range({name}.shape[{k}]):" for k in range(ndim)]
            + [" " * 4 * ndim + f"{name}[{index}] = {copy}[{index}]"])


@numba.njit(nogil=True, no_cfunc_wrapper=True)
def all_finite(a) -> bool:
    """Whether every element of array `a` is finite (float or complex)."""
    for v in a.flat:
        if not cmath.isfinite(v):
            return False
    return True


def checked_entry(kernel, entry, nvalues: int, shadows: range, written, derivs: str,
                  guarded, label: str):
    """The @njit entry running `entry` (compiled for one signature: values, then the extras
    from `shadows` on, e.g. shadows and a seed) under the strong zero.

    `shadows`: parameter positions of the shadows (snapshot and checked). `written`: value
    positions the kernel may write (None: any). `derivs`: a Python expression over `d`, the
    entry's result, naming the derivatives to check (e.g. "d" or "d[1]"). `guarded()`: the
    guarded variant's entry (same signature), built on first call."""
    with _lock:
        compiled = _checked.get(entry)
        if compiled is None:
            compiled = _checked[entry] = _build(kernel, entry, nvalues, shadows, written, derivs,
                                                guarded, label)
    return compiled


def _build(kernel, entry, nvalues, shadows, written, derivs, guarded, label):
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
    if not plan.copyable:
        strong_zero.count(as_dispatcher(kernel))
        src = f"def checked({names}):\n    return guarded({names})\n"
        scope = {"guarded": guarded()}
    else:
        lazy = _Lazy(kernel, guarded, sig)
        body = [*plan.copies, f"d = entry({names})",
                f"if {' and '.join(plan.tests) or 'True'}:", "    return d",
                *plan.restores, "with numba.objmode(r=RESTYPE):", f"    r = rerun({names})",
                "return r"]
        src = f"def checked({names}):\n" + "".join(f"    {line}\n" for line in body)
        scope = {"entry": entry, "all_finite": all_finite, "cmath": cmath, "numba": numba,
                 "RESTYPE": restype, "rerun": lazy}
    exec(compile(src, f"<enzyme_py strong zero {label}>", "exec"), scope)
    fn = scope["checked"]
    fn.__qualname__ = f"checked_{label}"
    compiled = numba.njit(nogil=True, no_cfunc_wrapper=True)(fn)
    with warnings.catch_warnings():     # the object-mode block holds the GIL: it is the rare path
        warnings.simplefilter("ignore", NumbaWarning)
        compiled.compile(sig)
    compiled.disable_compile()
    return compiled


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
