"""One capture and one cleanup per (kernel, argument types), shared by every build.

Reverse mode, forward mode, the Hessian-vector product, batched seeds, `cache="always"`,
`deterministic=True` and the other variants of one kernel and signature all start from the
same captured and cleaned module; capture (a second typing and lowering) and cleanup (O2)
are a large part of a build (docs/performance.md). `captured` keeps the Captured on the
dispatcher, so it lives as long as the kernel; it is taken again when the dispatcher's
compiled overload for these types is no longer the one it was captured against (Numba
recompiled the kernel). `cleaned` keeps each Captured's cleaned text while the Captured lives.
"""
import threading
import weakref

from .capture import Captured, capture, resolve_overload
from .cleanup import cleanup
from .complex_pow import substitute as complex_pow
from .frozen import adopted, note_use
from .rule_calls import substitute

_ATTR = "_enzyme_py_captures"     # on the dispatcher: {argtypes: (generation, overload, Captured)}
_lock = threading.Lock()
_generation = [0]                 # forget_all() makes every kept capture stale
_cleaned: "weakref.WeakKeyDictionary[Captured, str]" = weakref.WeakKeyDictionary()


def captured(dispatcher, argtypes) -> Captured:
    """capture(dispatcher, argtypes), taken once per compiled overload of these types."""
    argtypes = tuple(argtypes)
    note_use(dispatcher, argtypes)
    _, original = resolve_overload(dispatcher, argtypes)
    memo = dispatcher.__dict__.get(_ATTR)
    hit = memo.get(argtypes) if memo is not None else None
    if hit is not None and hit[0] == _generation[0] and (
            hit[1] is original or hit[1] is None and adopted(dispatcher, argtypes) is original):
        return hit[2]
    cap = capture(dispatcher, argtypes)
    # The copy's compile may have compiled the kernel itself (a recursive kernel): key the
    # memo by the overload that exists now.
    _, original = resolve_overload(dispatcher, argtypes)
    with _lock:
        dispatcher.__dict__.setdefault(_ATTR, {})[argtypes] = (_generation[0], original, cap)
    return cap


def cleaned_text(cap: Captured) -> str:
    """cleanup(cap.text, cap.fn_name), run once per Captured, after the functions with a
    custom rule were replaced by calls to their C-callable copies (rule_calls.py) and Numba's
    complex power by its ruled form (complex_pow.py)."""
    text = _cleaned.get(cap)
    if text is None:
        text = cleanup(complex_pow(substitute(cap.text)), cap.fn_name)
        with _lock:
            _cleaned[cap] = text
    return text


def forget_all() -> None:
    """Capture and clean every kernel again at its next build (clear_cache)."""
    with _lock:
        _generation[0] += 1
        _cleaned.clear()
