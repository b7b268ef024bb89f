"""An entry built on its first call: `autodiff` inside @njit calls the gradient for arrays apart
when its arrays do not overlap, and this stand-in for the variant that assumes nothing about
overlaps otherwise, which then builds it (through an object-mode block, entered only then).
Calls whose arrays are apart never pay for building it.

Code calling the stand-in is differentiated as calling the guarded variant straight, as for a
checked entry (strong_zero_entry.py): AD cannot follow the object-mode block.
"""
from __future__ import annotations

import threading
import warnings

import numba
from numba.core.errors import NumbaWarning

from ..bridge.capture import capture_as
from .strong_zero_entry import substitute_guarded


class _Build:
    """run(*args): the compiled code `build()` gives for `sig`, built on first call."""

    def __init__(self, build, sig):
        self.build, self.sig = build, sig
        self.lock = threading.Lock()
        self.run = None

    def __call__(self, *args):
        if self.run is None:
            with self.lock:
                if self.run is None:
                    # the exact overload's wrapper unboxes the arguments as compiled code saw them
                    self.run = self.build().overloads[self.sig].entry_point
        return self.run(*args)


def lazy_entry(sig, restype, build, guarded, label: str):
    """An @njit function of signature `sig` returning `restype` that calls `build()` (an
    entry compiled for `sig`, built on the first call); `guarded()`: the guarded variant's entry,
    what code calling it is differentiated as."""
    names = ", ".join(f"p{i}" for i in range(len(sig)))
    src = (f"def lazy({names}):\n    with numba.objmode(r=RESTYPE):\n        r = run({names})\n"
           "    return r\n")
    scope = {"numba": numba, "RESTYPE": restype, "run": _Build(build, sig)}
    exec(compile(src, f"<enzyme_py lazy entry {label}>", "exec"), scope)
    fn = scope["lazy"]
    fn.__qualname__ = f"lazy_{label}"
    compiled = numba.njit(nogil=True, no_cfunc_wrapper=True)(fn)
    with warnings.catch_warnings():     # the object-mode block holds the GIL: the rare path
        warnings.simplefilter("ignore", NumbaWarning)
        compiled.compile(sig)
    compiled.disable_compile()
    capture_as(compiled, sig, substitute_guarded(len(sig), None, guarded))
    return compiled
