"""Options apart from kernel parameters: `autodiff(k, x, memory=...)` must not be read as the
option when `k` has a parameter `memory` that the call leaves to that keyword.

`kernel_options(n_before)` wraps a function whose first argument is the kernel (after a Mode in
Enzyme.jl's order) and whose options are its parameters with defaults (`out`, the kernel's own
output array, excepted). A keyword with an option's name is the option when the kernel has no
such parameter, or when the call already fills that parameter positionally (a plain call would
then refuse the keyword as a second value). Otherwise it is ambiguous: a TypeError says how to
pass the kernel's value. `n_before`: the function's positional arguments after the kernel that
are not the kernel's (jvp's and hvp's direction `v`).
"""
from __future__ import annotations

import functools
import inspect
import weakref

from .annotations import Mode

AUTODIFF_OPTIONS = ("mode", "seed", "cache", "deterministic", "memory")
_params = weakref.WeakKeyDictionary()      # kernel -> its positional parameter names, in order


def kernel_parameters(kernel) -> tuple:
    """The names of the kernel's Python parameters, in order (() when it has no Python
    signature)."""
    try:
        found = _params.get(kernel)
    except TypeError:                       # not weakly referenceable
        found = None
    if found is not None:
        return found
    fn = getattr(kernel, "py_func", None) or \
        getattr(getattr(kernel, "dispatcher", None), "py_func", None) or kernel
    try:
        found = tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        found = ()
    try:
        _params[kernel] = found
    except TypeError:
        pass
    return found


def refuse_collisions(what: str, options, args, kwargs, n_before: int = 0) -> None:
    """TypeError when a keyword in `kwargs` that is one of `options` also names a parameter of the
    kernel (args[0], or args[1] after a Mode) that the positional arguments leave unfilled."""
    if not args:
        return
    kernel, rest = args[0], args[1:]
    if isinstance(kernel, Mode) and rest:
        kernel, rest = rest[0], rest[1:]
    params = kernel_parameters(kernel)
    filled = max(0, len(rest) - n_before)
    for name in kwargs:
        if name in options and name in params[filled:]:
            raise TypeError(
                f"{what}(..., {name}=...): `{name}` is both an option of {what} and a parameter "
                f"of the kernel {getattr(kernel, '__name__', kernel)!s}, so the keyword is "
                f"ambiguous. Pass the kernel's `{name}` positionally (then `{name}=` is the "
                f"option), or rename the parameter")


def kernel_options(n_before: int = 0, also=()):
    """Decorator: the function refuses keywords that collide with kernel parameters
    (refuse_collisions); its options are its parameters with defaults, `out` excepted, and
    `also` (the options of the `autodiff` call its keyword arguments go on to). The checked
    function keeps the plain one as `__wrapped__` (for calls that pass options themselves)
    and its option names as `options`."""
    def wrap(func):
        options = frozenset(
            p.name for p in inspect.signature(func).parameters.values()
            if p.default is not p.empty and p.name != "out") | frozenset(also)
        what = func.__name__

        @functools.wraps(func)
        def checked(*args, **kwargs):
            if kwargs and not options.isdisjoint(kwargs):
                refuse_collisions(what, options, args, kwargs, n_before)
            return func(*args, **kwargs)
        checked.options = options
        checked.n_before = n_before
        return checked
    return wrap


def unchecked(helper, args, kwargs):
    """`helper` without its check, after checking the caller's own keywords `kwargs` for the
    call `helper(*args, **kwargs)` (for wrappers that add options themselves)."""
    if kwargs and not helper.options.isdisjoint(kwargs):
        refuse_collisions(helper.__name__, helper.options, args, kwargs, helper.n_before)
    return helper.__wrapped__
