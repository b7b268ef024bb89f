"""What every workload shares: its arguments, how to reset them, how to call the primal, the
enzyme_py gradient and the hand-written adjoint, and how to read the gradient back.

A workload module builds an `Instance` from `Arg`s. Every array lives in a buffer allocated
once; `reset()` copies the initial values (and the shadow seeds) back in before each timed
call, so in-place kernels always start from the same state and no timed call touches fresh
pages.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, List, Optional

import numpy as np

from enzyme_py import Active, Const, Duplicated, DuplicatedNoNeed, autodiff, compile_gradient


@dataclass
class Arg:
    """One kernel argument.

    kind: "const", "dup" (Duplicated array) or "active" (float scalar).
    init: its initial value. seed: for "dup", the initial shadow (dL/d final value);
    None means zeros. wrt: whether its derivative is part of the reported gradient.
    need: for "dup", False when the caller does not need its primal result (DuplicatedNoNeed).
    """
    kind: str
    init: Any
    seed: Any = None
    wrt: bool = True
    name: str = ""
    need: bool = True


@dataclass
class Hand:
    """A hand-written adjoint: `call()` runs it on its own buffers (reset by `reset()`),
    `result()` returns the gradient laid out like `Instance.grad_vector()`."""
    call: Callable[[], Any]
    reset: Callable[[], None]
    result: Callable[[], np.ndarray]


class Instance:
    """A workload at one size, with persistent buffers."""

    def __init__(self, kernel, args: List[Arg], seed: float = 1.0, hand: Optional[Hand] = None,
                 note: str = ""):
        self.kernel = kernel
        self.spec = args
        self.seed = float(seed)
        self.hand = hand
        self.note = note
        self.values = [np.array(a.init, copy=True) if isinstance(a.init, np.ndarray) else a.init
                       for a in args]
        self.shadows = [np.zeros_like(a.init) if a.kind == "dup" else None for a in args]
        self.derivs = None
        self._entry = None
        self.reset()

    # -- state ----------------------------------------------------------------------------
    def reset(self):
        for a, v, s in zip(self.spec, self.values, self.shadows):
            if isinstance(v, np.ndarray):
                np.copyto(v, a.init)
            if s is not None:
                if a.seed is None:
                    s.fill(0.0)
                else:
                    np.copyto(s, a.seed)
        if self.hand is not None:
            self.hand.reset()

    def annotated(self):
        out = []
        for a, v, s in zip(self.spec, self.values, self.shadows):
            if a.kind == "dup":
                out.append((Duplicated if a.need else DuplicatedNoNeed)(v, s))
            elif a.kind == "active":
                out.append(Active(v))
            else:
                out.append(Const(v))
        return out

    # -- calls ----------------------------------------------------------------------------
    def primal(self):
        return self.kernel(*self.values)

    def compile(self):
        """Build the gradient (enzyme_py's cache makes repeats free)."""
        self._entry = compile_gradient(self.kernel, *self.annotated()).entry
        return self._entry

    def grad(self):
        """One gradient through the compiled @njit entry (no Python-side validation)."""
        if self._entry is None:
            self.compile()
        shadows = [s for s in self.shadows if s is not None]
        self.derivs = self._entry(*self.values, *shadows, self.seed)
        return self.derivs

    def grad_api(self):
        """One gradient through the user API `autodiff` (validation + cache lookup)."""
        res = autodiff(self.kernel, *self.annotated(), seed=self.seed)
        self.derivs = tuple(r for r in res if r is not None)
        return res

    # -- results --------------------------------------------------------------------------
    def grad_vector(self) -> np.ndarray:
        """The gradient after `grad()`: shadows of the `wrt` arrays, then `wrt` actives,
        in argument order, flattened."""
        parts = []
        actives = iter(self.derivs or ())
        for a, s in zip(self.spec, self.shadows):
            if a.kind == "dup" and a.wrt:
                parts.append(s.ravel())
            elif a.kind == "active":
                d = next(actives)
                if a.wrt:
                    parts.append(np.array([d]))
        return np.concatenate(parts) if parts else np.zeros(0)

    def objective(self, values) -> float:
        """L = seed * return + sum <shadow seed, final array> for the given initial values."""
        vals = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in values]
        ret = self.kernel(*vals)
        total = self.seed * float(ret) if isinstance(ret, (float, np.floating)) else 0.0
        for a, v in zip(self.spec, vals):
            if a.kind == "dup" and a.seed is not None:
                total += float(np.dot(np.ravel(a.seed), np.ravel(v)))
        return total

    def directional_fd(self, rng, g=None, h=1e-6):
        """(g . v, central finite difference of L along v) for a random direction v over the
        `wrt` inputs; g defaults to the gradient of the last `grad()`."""
        g = np.ravel(self.grad_vector() if g is None else g)
        dirs, parts = [], []
        for a in self.spec:
            if a.wrt and a.kind == "dup":
                d = rng.standard_normal(np.shape(a.init)) * np.maximum(np.abs(a.init), 1e-3)
                dirs.append(d)
                parts.append(d.ravel())
            elif a.wrt and a.kind == "active":
                d = float(rng.standard_normal()) * max(abs(a.init), 1e-3)
                dirs.append(d)
                parts.append(np.array([d]))
            else:
                dirs.append(None)
        ad = float(np.dot(g, np.concatenate(parts)))

        def shifted(t):
            return [a.init + t * d if d is not None else a.init for a, d in zip(self.spec, dirs)]
        fd = (self.objective(shifted(h)) - self.objective(shifted(-h))) / (2 * h)
        return ad, fd


def close(x, y, rtol):
    """ADBench-style: |x - y| / max(1, |x| + |y|) <= rtol, elementwise."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    return np.abs(x - y) / np.maximum(1.0, np.abs(x) + np.abs(y)) <= rtol


def rel_err(x, y) -> float:
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    scale = max(1e-300, float(np.max(np.abs(y))) if y.size else 1.0)
    return float(np.max(np.abs(x - y)) / scale) if x.size else 0.0


def fd_agrees(ad, fd, rtol=1e-5) -> bool:
    return math.isfinite(ad) and abs(ad - fd) <= rtol * max(1.0, abs(fd))


def verify(inst, rng, g=None, directions=2, rtol=1e-5):
    """Check a gradient (default: enzyme_py's, after `grad()`) against central finite
    differences along random directions. Returns (ok, message)."""
    if hasattr(inst, "verify"):
        return inst.verify(rng, g)
    worst = 0.0
    for _ in range(directions):
        ad, fd = inst.directional_fd(rng, g)
        if not fd_agrees(ad, fd, rtol):
            return False, f"directional derivative {ad!r} but finite difference {fd!r}"
        worst = max(worst, abs(ad - fd) / max(1.0, abs(fd)))
    return True, f"finite differences agree (worst rel. {worst:.1e})"
