"""Finite-difference checker for `autodiff` (reverse mode).

This module is only a *checker*: it compares what `autodiff` computes with central finite
differences of the plain kernel. Nothing in enzyme_py's AD uses it.

Semantics checked (the reverse-mode contract)::

    L = sum over Duplicated args k of  <shadow_k as given, final value of array k>
        + seed * (return value, when the kernel returns a float)

After `autodiff`, each shadow must hold dL/d(initial value of its array) and each Active
argument's entry in the result tuple must be dL/d(that scalar). `check_gradient` computes the
same derivatives by perturbing each initial element (and each Active scalar) by +-h on copies,
running the plain kernel, and evaluating L. The caller's arrays are never modified: every run,
including the `autodiff` run, works on copies that keep dtype, shape, memory order and strides
(so the same Numba specialisation is used).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional

import numpy as np

from . import api
from .annotations import Active, Const, Duplicated, DuplicatedNoNeed, as_annotation
from .arguments import clone

__all__ = ["check_gradient", "finite_difference", "GradientReport", "ArgReport",
           "default_step", "default_rtol"]

# Relative step of the central difference, per floating dtype of the arithmetic that the
# finite difference runs in. float64: rounding error ~ 1e-16/h, truncation ~ h^2 -> 1e-6 keeps
# both well below the default rtol of 1e-6 for smooth, well-scaled kernels. float32 needs a much
# larger step (eps32 ~ 1.2e-7).
_STEP = {np.dtype(np.float64): 1e-6, np.dtype(np.float32): 3e-3}
# The tightest relative tolerance that makes sense for derivatives computed in a dtype, against a
# finite difference in that dtype, and against one computed in float64 (fd_dtype=np.float64).
_RTOL_FLOOR = {np.dtype(np.float64): 0.0, np.dtype(np.float32): 1e-3}
_RTOL_FLOOR_VS_F64 = {np.dtype(np.float64): 0.0, np.dtype(np.float32): 1e-4}


def default_step(dtype) -> float:
    """Relative finite-difference step used for arithmetic in `dtype`."""
    dt = np.dtype(dtype)
    if dt in _STEP:
        return _STEP[dt]
    return float(np.finfo(dt).eps) ** (1.0 / 3.0)


def default_rtol(dtype, rtol: float = 1e-6, fd_dtype=None) -> float:
    """The relative tolerance actually applied to a derivative of `dtype` (>= `rtol`): float32
    gets at least 1e-3 against a float32 finite difference, 1e-4 against a float64 one."""
    dt = np.dtype(dtype)
    table = _RTOL_FLOOR
    if fd_dtype is not None and np.dtype(fd_dtype).itemsize > dt.itemsize:
        table = _RTOL_FLOOR_VS_F64
    floor = table.get(dt, math.sqrt(float(np.finfo(dt).eps)))
    return max(float(rtol), floor)


def _is_float_array(a) -> bool:
    return isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating)


def _is_float_scalar(v) -> bool:
    return isinstance(v, (float, np.floating)) and not isinstance(v, bool)


# --------------------------------------------------------------------------------------------
# Finite differences
# --------------------------------------------------------------------------------------------

@dataclass
class _Arg:
    index: int
    kind: str              # "Const", "Active", "Duplicated", "DuplicatedNoNeed"
    value: Any             # initial primal (a private copy for arrays)
    shadow: Any = None     # initial shadow / seed (private copy), Duplicated only


def _parse_args(args, rng) -> List[_Arg]:
    gen = np.random.default_rng(rng) if rng is not None else None
    parsed = []
    for i, raw in enumerate(args):
        ann = as_annotation(raw)
        kind = type(ann).__name__
        value = ann.value
        if isinstance(value, np.ndarray):
            value = clone(value)
        shadow = None
        if isinstance(ann, (Duplicated, DuplicatedNoNeed)):
            shadow = ann.shadow
            if isinstance(shadow, np.ndarray):
                shadow = clone(shadow)
                if gen is not None and _is_float_array(shadow):
                    shadow[...] = gen.standard_normal(shadow.shape)
        parsed.append(_Arg(i, kind, value, shadow))
    return parsed


def _check_no_aliasing(args):
    arrays = []
    for i, raw in enumerate(args):
        ann = as_annotation(raw)
        for what, a in (("value", ann.value), ("shadow", getattr(ann, "shadow", None))):
            if isinstance(a, np.ndarray):
                arrays.append((i, what, a))
    for k in range(len(arrays)):
        for m in range(k + 1, len(arrays)):
            (i, wi, a), (j, wj, b) = arrays[k], arrays[m]
            if np.shares_memory(a, b):
                raise ValueError(
                    f"check_gradient: argument {i} ({wi}) and argument {j} ({wj}) share memory; "
                    "the checker copies every array, which would break that aliasing. "
                    "Pass non-overlapping arrays.")


class _Objective:
    """L(initial values) evaluated with the plain kernel, on copies."""

    def __init__(self, kernel, parsed: List[_Arg], seed: float, fd_dtype):
        self.kernel = kernel
        self.parsed = parsed
        self.seed = float(seed)
        self.fd_dtype = np.dtype(fd_dtype) if fd_dtype is not None else None

    def cast(self, v):
        """The value in the arithmetic the finite difference runs in."""
        fd = self.fd_dtype
        if fd is None:
            return v
        if _is_float_array(v) and v.dtype.itemsize < fd.itemsize:
            return clone(v, dtype=fd)
        if _is_float_scalar(v) and np.asarray(v).dtype.itemsize < fd.itemsize:
            return fd.type(v)
        return v

    def initial(self):
        """Fresh writable copies of the initial primal values (cast to the FD dtype)."""
        out = []
        for p in self.parsed:
            v = self.cast(p.value)
            if isinstance(v, np.ndarray):
                v = clone(v, writeable=True)
            out.append(v)
        return out

    def __call__(self, values) -> float:
        call_args = []
        for p, v in zip(self.parsed, values):
            if isinstance(v, np.ndarray) and not (isinstance(p.value, np.ndarray)
                                                  and p.value.flags.writeable):
                v = clone(v, writeable=False)
            call_args.append(v)
        ret = self.kernel(*call_args)
        terms = []
        for p, v in zip(self.parsed, call_args):
            if p.kind in ("Duplicated", "DuplicatedNoNeed") and _is_float_array(p.shadow):
                terms.extend((np.asarray(p.shadow, np.float64) * np.asarray(v, np.float64)).ravel().tolist())
        terms.append(self.seed * _return_as_float(ret))
        return math.fsum(terms)


def _return_as_float(ret) -> float:
    if ret is None or isinstance(ret, (bool, np.bool_, int, np.integer)):
        return 0.0  # no derivative flows through a non-float return
    if _is_float_scalar(ret):
        return float(ret)
    raise TypeError(f"check_gradient: the kernel returned {type(ret).__name__}; only a float "
                    "scalar return (or none) takes part in the checked objective")


def _fd_array(obj: _Objective, k: int, eps: Optional[float]) -> np.ndarray:
    base = obj.initial()
    x0 = base[k]
    h_rel = eps if eps is not None else default_step(x0.dtype)
    grad = np.zeros(x0.shape, dtype=np.float64)
    for idx in np.ndindex(x0.shape):
        v = float(x0[idx])
        h = h_rel * max(1.0, abs(v))
        vals = []
        steps = []
        for sign in (1.0, -1.0):
            trial = obj.initial()
            trial[k][idx] = v + sign * h
            steps.append(float(trial[k][idx]))  # the value actually stored (rounded to dtype)
            vals.append(obj(trial))
        denom = steps[0] - steps[1]
        grad[idx] = (vals[0] - vals[1]) / denom
    return grad


def _fd_scalar(obj: _Objective, k: int, eps: Optional[float]) -> float:
    base = obj.initial()
    v0 = base[k]
    dt = np.asarray(v0).dtype
    h_rel = eps if eps is not None else default_step(dt)
    v = float(v0)
    h = h_rel * max(1.0, abs(v))
    vals, steps = [], []
    for sign in (1.0, -1.0):
        trial = obj.initial()
        trial[k] = dt.type(v + sign * h)
        steps.append(float(trial[k]))
        vals.append(obj(trial))
    return (vals[0] - vals[1]) / (steps[0] - steps[1])


def finite_difference(kernel: Callable, *args: Any, seed: float = 1.0, eps: Optional[float] = None,
                      fd_dtype=None, rng=None) -> list:
    """Central finite differences of L (see the module docstring) w.r.t. each initial value.

    Returns a list with one entry per argument: a float64 array (same shape as the primal) for
    each Duplicated/DuplicatedNoNeed float array, a float for each Active scalar, None otherwise.
    `eps` is the relative step (default per dtype, see `default_step`); `fd_dtype` (e.g.
    `np.float64`) runs the plain kernel on upcast copies of lower-precision float arrays and
    scalars, for a more accurate reference. The caller's arrays are not modified.
    """
    _check_no_aliasing(args)
    parsed = _parse_args(args, rng)
    obj = _Objective(kernel, parsed, seed, fd_dtype)
    return _finite_difference(obj, eps)


def _finite_difference(obj: _Objective, eps):
    out = []
    for k, p in enumerate(obj.parsed):
        if p.kind in ("Duplicated", "DuplicatedNoNeed"):
            if not _is_float_array(p.value):
                raise TypeError(f"check_gradient: argument {k} is {p.kind} but its value is not "
                                "a float NumPy array")
            out.append(_fd_array(obj, k, eps))
        elif p.kind == "Active":
            if not _is_float_scalar(p.value):
                raise TypeError(f"check_gradient: argument {k} is Active but its value is not a "
                                "float scalar")
            out.append(_fd_scalar(obj, k, eps))
        else:
            out.append(None)
    return out


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

@dataclass
class ArgReport:
    """Comparison for one differentiated argument."""
    index: int
    kind: str                 # "Duplicated", "DuplicatedNoNeed" or "Active"
    ad: Any                   # what autodiff left in the shadow (float64 copy) / returned
    fd: Any                   # the finite-difference reference
    max_abs_err: float
    max_rel_err: float
    rtol: float
    atol: float
    passed: bool

    def worst(self, k: int = 5):
        """Up to `k` (index, ad, fd, abs err) tuples, largest error first."""
        ad = np.atleast_1d(np.asarray(self.ad, np.float64))
        fd = np.atleast_1d(np.asarray(self.fd, np.float64))
        err = np.abs(ad - fd)
        err = np.where(np.isnan(err), np.inf, err)
        order = np.argsort(-err, axis=None, kind="stable")[:k]
        rows = []
        for flat in order:
            idx = np.unravel_index(flat, ad.shape)
            rows.append((tuple(int(i) for i in idx) if np.ndim(self.ad) else (),
                         float(ad[idx]), float(fd[idx]), float(err[idx])))
        return rows


@dataclass
class GradientReport:
    """Result of `check_gradient`. `passed` is True when every argument passed and every primal
    array ended exactly as a plain call leaves it."""
    kernel_name: str
    seed: float
    args: List[ArgReport] = field(default_factory=list)
    primal_mismatches: List[str] = field(default_factory=list)
    ad_result: Any = None

    @property
    def passed(self) -> bool:
        return all(a.passed for a in self.args) and not self.primal_mismatches

    def __bool__(self) -> bool:
        return self.passed

    def __getitem__(self, index: int) -> ArgReport:
        """The report of the argument at position `index` of the call."""
        for a in self.args:
            if a.index == index:
                return a
        raise KeyError(f"argument {index} is not differentiated (Const)")

    def __str__(self) -> str:
        lines = [f"check_gradient({self.kernel_name}, seed={self.seed:g}): "
                 + ("PASSED" if self.passed else "FAILED")]
        if not self.args:
            lines.append("  (no Duplicated or Active argument)")
        else:
            lines.append(f"  {'arg':>3}  {'kind':<16} {'size':>5}  {'max abs err':>11}  "
                         f"{'max rel err':>11}  {'rtol':>8}  {'atol':>8}  ok")
            for a in self.args:
                lines.append(f"  {a.index:>3}  {a.kind:<16} {np.size(a.fd):>5}  {a.max_abs_err:>11.3e}  "
                             f"{a.max_rel_err:>11.3e}  {a.rtol:>8.1e}  {a.atol:>8.1e}  "
                             + ("yes" if a.passed else "NO"))
            for a in self.args:
                if not a.passed:
                    lines.append(f"  arg {a.index}: worst elements (index, autodiff, finite diff, abs err):")
                    for idx, ad, fd, err in a.worst():
                        lines.append(f"    {idx!s:<12} {ad: .10e}  {fd: .10e}  {err:.3e}")
        for m in self.primal_mismatches:
            lines.append(f"  primal: {m}")
        return "\n".join(lines)

    __repr__ = __str__


def _compare(index, kind, ad, fd, rtol, atol) -> ArgReport:
    ad_a = np.asarray(ad, dtype=np.float64)
    fd_a = np.asarray(fd, dtype=np.float64)
    if atol is None:
        scale = float(np.max(np.abs(fd_a))) if fd_a.size else 0.0
        atol = rtol * max(1.0, scale)
    err = np.abs(ad_a - fd_a)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(err == 0, 0.0, err / np.abs(fd_a))
    ok = bool(np.all(err <= atol + rtol * np.abs(fd_a)))  # False on NaN
    max_abs = float(np.max(err)) if err.size else 0.0
    max_rel = float(np.max(rel)) if rel.size else 0.0
    if err.size and np.isnan(err).any():
        max_abs = max_rel = float("nan")
    return ArgReport(index, kind, ad if np.ndim(ad) == 0 and not isinstance(ad, np.ndarray) else ad_a,
                     fd, max_abs, max_rel, float(rtol), float(atol), ok)


def _same_primal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def check_gradient(kernel: Callable, *args: Any, seed: float = 1.0, rtol: float = 1e-6,
                   atol: Optional[float] = None, eps: Optional[float] = None, rng=None,
                   fd_dtype=None) -> GradientReport:
    """Check `autodiff(kernel, *args, seed=seed)` against central finite differences.

    Arguments are annotated as for `autodiff` (`Duplicated(x, dx)`, `Active(v)`, `Const(n)` or a
    bare value). The shadows as given are the weights on the final arrays in L (see the module
    docstring); with `rng` (a seed or `np.random.Generator`) the shadows are instead filled with
    standard-normal weights (on copies).

    Tolerance: an element passes when |ad - fd| <= atol + rtol_eff * |fd|, where rtol_eff is
    `rtol` for float64 and, for float32, at least 1e-3 (1e-4 with `fd_dtype=np.float64`; see
    `default_rtol`), and `atol` defaults to rtol_eff * max(1, max |fd| over that argument).
    `eps` is the relative step (default: 1e-6 for float64 arithmetic, 3e-3 for float32).
    `fd_dtype=np.float64` computes the reference on float64 copies of float32 values (the same
    kernel compiled for float64).

    Also checks that the primal arrays after `autodiff` equal those after a plain call
    (DuplicatedNoNeed primals excepted). Never modifies the caller's arrays.
    Returns a `GradientReport` (`.passed`, per-argument `report[i]`, readable `str()`).
    """
    _check_no_aliasing(args)
    parsed = _parse_args(args, rng)
    obj = _Objective(kernel, parsed, seed, fd_dtype)

    # 1. autodiff on private copies.
    ad_args = []
    ad_values = []
    for p in parsed:
        v = clone(p.value) if isinstance(p.value, np.ndarray) else p.value
        ad_values.append(v)
        if p.kind in ("Duplicated", "DuplicatedNoNeed"):
            s = clone(p.shadow) if isinstance(p.shadow, np.ndarray) else p.shadow
            ad_args.append((Duplicated if p.kind == "Duplicated" else DuplicatedNoNeed)(v, s))
        elif p.kind == "Active":
            ad_args.append(Active(v))
        else:
            ad_args.append(Const(v))
    result = api.autodiff(kernel, *ad_args, seed=seed)

    # 2. a plain call on private copies, for the primal check.
    plain_values = [clone(p.value) if isinstance(p.value, np.ndarray) else p.value for p in parsed]
    kernel(*plain_values)

    # 3. the finite-difference reference.
    fd = _finite_difference(obj, eps)

    report = GradientReport(getattr(kernel, "__name__", repr(kernel)), float(seed), ad_result=result)
    for k, p in enumerate(parsed):
        if p.kind in ("Duplicated", "DuplicatedNoNeed"):
            shadow_after = ad_args[k].shadow
            r = max(default_rtol(np.asarray(shadow_after).dtype, rtol, fd_dtype),
                    default_rtol(p.value.dtype, rtol, fd_dtype))
            report.args.append(_compare(k, p.kind, np.array(shadow_after, dtype=np.float64), fd[k], r, atol))
        elif p.kind == "Active":
            got = None
            if isinstance(result, tuple) and len(result) == len(parsed):
                got = result[k]
            if got is None:
                raise TypeError(f"check_gradient: autodiff returned {result!r}; expected a tuple "
                                f"with a float at position {k} (the Active argument)")
            r = default_rtol(np.asarray(p.value).dtype, rtol, fd_dtype)
            report.args.append(_compare(k, "Active", float(got), fd[k], r, atol))
        if isinstance(p.value, np.ndarray) and p.kind != "DuplicatedNoNeed":
            after_ad, after_plain = ad_values[k], plain_values[k]
            if not _same_primal(after_ad, after_plain):
                diff = np.max(np.abs(np.asarray(after_ad, np.float64) - np.asarray(after_plain, np.float64)))
                report.primal_mismatches.append(
                    f"argument {k} after autodiff differs from a plain call (max abs diff {diff:.3e})")
    return report
