"""Real callers' forms drawn on top of a generated program (profile "callers", issue 14).

`draw_forms(prog, rng)` decides, for a program the generator made, how scientific code would
declare and call it:

- helpers with an explicit signature (`@njit("f8(f8, f8)")`, compiled at decoration) or with
  `locals=` declaring their float parameters float64; the plain-Python traced copy casts those
  parameters (and an explicit signature's return value) to float64 as Numba does;
- `cache=True` on the kernel and its helpers: the checker writes the source to a file, imports
  it, checks it, then imports the same file again as a second module, whose dispatchers load
  Numba's disk cache, and checks that one too;
- helpers compiled "before enzyme_py was imported": their recorded IR is forgotten once the
  kernel is compiled, so capture must rebuild them (the same signature, locals and flags);
- defaults: Const parameters moved to the end with their value as the default, some left out
  of the call (Numba then fills them as constants), others passed by keyword, and sometimes a
  differentiated argument passed by keyword;
- array and tuple returns: the kernel returns a Duplicated array argument or a temporary of its
  top level, alone (void kernels) or with its float result and an integer, `(value, X, n)`;
  the seed has the return value's structure.

The draws use their own random stream, so programs of the other profiles never change.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from enzyme_py.bridge.capture import forget_recorded_ir
from .program import Return, Temp, walk_stmts


@dataclass
class CallForms:
    sig_helpers: set = field(default_factory=set)     # helper names with an explicit signature
    locals_helpers: set = field(default_factory=set)  # helper names with locals=
    cache: bool = False          # cache=True, and the program checked a second time from cache
    early: bool = False          # helpers' recorded IR forgotten before the gradient is built
    defaults: dict = field(default_factory=dict)     # param name -> default value
    omitted: set = field(default_factory=set)        # defaulted params left out of the call
    keywords: set = field(default_factory=set)       # params passed by keyword
    ret: Optional[tuple] = None  # ("array", X) or ("tuple", X, with_int)


def draw_forms(prog, rng: random.Random) -> None:
    """Attach a CallForms to `prog` (reorders its parameters when some get defaults)."""
    f = CallForms()
    for h in prog.helpers:
        floats = [k for _, k in h.params if k == "f"]
        if h.ret is not None and floats and len(floats) == len(h.params) and rng.random() < 0.35:
            f.sig_helpers.add(h.name)
        elif floats and rng.random() < 0.3:
            f.locals_helpers.add(h.name)
    f.cache = rng.random() < 0.3
    f.early = not f.cache and bool(prog.helpers) and rng.random() < 0.4
    _draw_defaults(prog, f, rng)
    _draw_return(prog, f, rng)
    prog.forms = f


def _draw_defaults(prog, f, rng):
    consts = [p for p in prog.params if p.ann == "const" and p.kind in ("float", "int")]
    chosen = [p for p in consts if rng.random() < 0.6]
    if chosen:
        rest = [p for p in prog.params if p not in chosen]
        prog.params[:] = rest + chosen
        for p in chosen:
            f.defaults[p.name] = _value(prog, p)
            if rng.random() < 0.6:
                f.omitted.add(p.name)
    called = [p for p in prog.params if p.name not in f.omitted]
    if called and rng.random() < 0.4:
        first = rng.randrange(len(called))
        f.keywords = {p.name for p in called[first:]}


def _value(prog, p):
    if p.kind == "int":
        return max(0, prog.sizes[p.dims[0]] - p.offset)
    return float(np.float32(p.value)) if p.dtype == "f32" else float(p.value)


def _draw_return(prog, f, rng):
    if rng.random() < 0.45:
        return
    final = prog.body[-1] if prog.returns else None
    early_return = any(isinstance(s, Return) and s is not final for s in walk_stmts(prog.body))
    arrays = [p.name for p in prog.params if p.kind == "arr" and p.ann == "dup"]
    if not early_return:
        arrays += [s.name for s in prog.body if isinstance(s, Temp)]
    if not arrays:
        return
    x = rng.choice(arrays)
    if prog.returns:
        f.ret = ("tuple", x, rng.random() < 0.5)
    else:
        f.ret = ("array", x)


def return_seed(prog, rng):
    """A seed of the structure of the return value under `prog.forms.ret`."""
    kind = prog.forms.ret[0]
    arr = np.round(rng.standard_normal(array_shape(prog, prog.forms.ret[1])), 4)
    if kind == "array":
        return arr
    value = float(round(rng.uniform(0.5, 1.5), 4))
    return (value, arr, None) if prog.forms.ret[2] else (value, arr)


def array_shape(prog, name) -> tuple:
    p = prog.param(name)
    if p is not None:
        return tuple(prog.sizes[d] for d in p.dims)
    for s in walk_stmts(prog.body):
        if isinstance(s, Temp) and s.name == name:
            return tuple(prog.sizes[d] for d in s.dims)
    raise KeyError(name)


def return_dtype(prog, name) -> str:
    p = prog.param(name)
    if p is not None:
        return p.dtype
    for s in walk_stmts(prog.body):
        if isinstance(s, Temp) and s.name == name:
            return s.dtype
    raise KeyError(name)


def forget_recordings(ns, prog) -> None:
    """Drop the IR that enzyme_py recorded for the helpers' compiled overloads, as if they had
    been compiled before enzyme_py was imported: capture must rebuild identical copies."""
    for h in prog.helpers:
        disp = ns.get(h.name)
        for cres in list(getattr(disp, "overloads", {}).values()):
            forget_recorded_ir(cres.library)
