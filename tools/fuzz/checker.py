"""Check one generated program: reverse mode against central finite differences.

Steps (`check_program`), cheapest first so that discarded programs cost no gradient build:

1. Exec the plain kernel's source and its traced copy (`program.render`; the traced copy is plain
   Python, see `prims_py.py`, so it costs no compilation).
2. Run the traced copy at the generated inputs. Discard the program (reason counted) when it
   divides by zero ("zero_division"), produces non-finite ("nonfinite") or huge values
   ("overflow"), or evaluates a function close to the edge of its domain or divides by something
   close to 0 ("near_singularity"). Then re-run it at inputs moved by a few finite-difference
   steps (random signs, both directions): every decision (comparison, min/max, abs, rounding,
   float->int, modulo) must come out the same ("branch_flip" otherwise: too close to a decision
   boundary).
3. Central finite differences of L (`enzyme_py.check.finite_difference`) of the compiled kernel
   at the default step and at twice that step must agree to a quarter of the tolerance
   ("fd_noise" otherwise). After this the finite-difference reference is trustworthy.
4. `compile_gradient`: `UnsupportedError` -> "unsupported" (the construct named), any other
   exception -> failure "crash:<Exception>".
5. `enzyme_py.check.check_gradient` (autodiff vs finite differences under the contract, and the
   primal arrays after autodiff equal to a plain call's): failure "wrong_gradient",
   "nan_gradient" or "primal_mismatch"; an exception -> "crash:<Exception>".
   For 10% of the kernels, the gradient is also built with `cache="always"` (every value
   taped instead of recomputed) and checked the same way ("...[cache=always]" failures).
6. When forward mode exists (detected at run time, see `forward_available`), for 20% of the
   kernels: <v, J u> from forward mode against <J^T v, u> from reverse mode; failure
   "forward_mismatch" (forward mode raising UnsupportedError is counted, not a failure).
"""
from __future__ import annotations

import copy
import importlib.util
import itertools
import linecache
import os
import re
import tempfile
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np
from numba import njit
from numba.core.errors import NumbaError

from enzyme_py import UnsupportedError
from enzyme_py.annotations import Active, Duplicated, Forward
from enzyme_py.api import autodiff, compile_gradient
from enzyme_py.check import check_gradient, finite_difference
from ir_passes.rules.registry import lookup
from . import prims_py
from .callers import forget_recordings
from .complex_data import ComplexKernel, check_complex
from .containers import ContainerKernel, check_container
from .exits import ExitKernel, check_exits
from .outcome import (DISCARD, FAIL, INVALID, PASS, Outcome, fd_discard, normalize_construct, selected, short,
                      tb, tolerance, unsupported)
from .parallel import check_parallel
from .prims_py import Trace
from .program import (Program, Reduce, layout_array, make_args, make_call, render, render_functions,
                      split_call, walk_all)

@dataclass
class Settings:
    """Tolerances of the checker (float32 = the program uses float32 anywhere)."""
    rtol64: float = 1e-6
    rtol32: float = 1e-3
    eps64: float = 1e-6
    eps32: float = 3e-3
    margin64: float = 1e-3       # relative distance to a domain edge below which we discard
    margin32: float = 2e-2
    big64: float = 1e10          # magnitudes above which we discard ("overflow")
    big32: float = 1e5
    cache_always: float = 0.1    # fraction of kernels also differentiated with cache="always"
    forward_fraction: float = 0.2  # fraction of kernels with the forward-vs-reverse check
    consistency: float = 0.25    # |FD(h) - FD(2h)| must be below this fraction of the tolerance
    perturbations: int = 4       # traced re-runs at perturbed inputs (decisions must not change)
    perturb_steps: float = 3.0   # their distance, in finite-difference steps
    collect_rules: bool = True
    forward: Optional[bool] = None   # None: auto-detect


_counter = itertools.count()


def load(prog: Program, traced: bool = True, path=None) -> dict:
    """Exec the program's source into a namespace: `kern` (@njit, not compiled yet) and, with
    traced=True, the plain-Python traced copy `kern_traced`. A program with cache=True
    (callers.py) is written to a file and imported from it (Numba caches only functions of
    files); `path` imports that file again, as another module."""
    src = render(prog)
    fname = f"<tools.fuzz seed={prog.seed} #{next(_counter)}>"
    if prog.forms is not None and prog.forms.cache:
        ns = _import_file(src, path)
    else:
        linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
        ns: dict = {"__name__": f"tools_fuzz_{next(_counter)}"}
        exec(compile(src, fname, "exec"), ns)
    ns["__source__"] = src
    if traced:
        tsrc = render_functions(prog, traced=True)
        tname = fname[:-1] + " traced>"
        linecache.cache[tname] = (len(tsrc), None, tsrc.splitlines(True), tname)
        ns["pp"] = prims_py
        exec(compile(tsrc, tname, "exec"), ns)
    return ns


def _import_file(src, path=None) -> dict:
    if path is None:
        folder = tempfile.mkdtemp(prefix="tools_fuzz_cache_")
        path = os.path.join(folder, f"fuzz_kernel_{next(_counter)}.py")
        with open(path, "w") as f:
            f.write(src)
    name = f"tools_fuzz_file_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ns = module.__dict__
    ns["__path__"] = path
    return ns


def _values(args):
    return [a.value for a in args]


class _Discard(Exception):
    def __init__(self, reason, detail=""):
        super().__init__(reason)
        self.reason, self.detail = reason, detail


def run_traced(traced, values):
    """Run the traced copy on (copies of) `values`; return its Trace. Raises _Discard when the
    run itself shows the inputs are bad (division by ~0, overflow, domain error)."""
    t = Trace()
    vals = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
    try:
        with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
            traced(*vals, t, t)
    except ZeroDivisionError:
        raise _Discard("zero_division")
    except OverflowError:
        raise _Discard("overflow")
    except FloatingPointError as exc:
        msg = str(exc)
        raise _Discard("overflow" if "overflow" in msg else
                       "zero_division" if "divide" in msg else "nonfinite")
    except ValueError as exc:
        msg = str(exc)
        if "fuzz: unexpected value" in msg:
            raise _Discard("overflow")
        if "domain" in msg:
            raise _Discard("near_singularity")
        raise
    except TypeError as exc:
        if "complex" in str(exc):       # Python's ** of a negative base (Numba: NaN)
            raise _Discard("near_singularity")
        raise
    return t


def _perturbed(prog, values, delta, rng):
    """Copies of `values` with every differentiable input moved by +-delta (relative)."""
    out = []
    for p, v in zip(prog.params, values):
        if p.kind == "arr" and p.ann == "dup":
            v = v.copy()
            signs = rng.choice([-1.0, 1.0], v.shape)
            v[...] = v + (delta * np.maximum(1.0, np.abs(v.astype(np.float64))) * signs).astype(v.dtype)
        elif p.kind == "float" and p.ann == "active":
            v = type(v)(float(v) + delta * max(1.0, abs(float(v))) * rng.choice([-1.0, 1.0]))
        out.append(v)
    return out


def rule_keys(ir_text: str) -> frozenset:
    """The derivative-rule keys that instructions and calls of `ir_text` use."""
    keys = set()
    for m in re.finditer(r"=\s+(?:fast\s+|nnan\s+|ninf\s+|nsz\s+|arcp\s+|contract\s+|afn\s+|reassoc\s+)*"
                         r"(fadd|fsub|fmul|fdiv|frem|fneg|fpext|fptrunc|select|freeze)\b", ir_text):
        keys.add(m.group(1))
    for m in re.finditer(r"call [^@\n]*@\"?([\w.$]+)", ir_text):
        rule = lookup(m.group(1))
        if rule is not None:
            keys.add(rule.key)
    return frozenset(keys)


def check_program(prog: Program, settings: Optional[Settings] = None) -> Outcome:
    """Check one program; never raises for anything the kernel or the AD does."""
    st = settings or Settings()
    t0 = time.perf_counter()
    if not isinstance(prog, Program):       # the kernels of the profiles with their own module
        check = check_exits if isinstance(prog, ExitKernel) else \
            check_complex if isinstance(prog, ComplexKernel) else \
            check_container if isinstance(prog, ContainerKernel) else check_parallel
        out = check(prog, st)
    else:
        out = _check(prog, st)
    out.seconds = time.perf_counter() - t0
    return out


def _check(prog: Program, st: Settings) -> Outcome:
    try:
        ns = load(prog)
    except Exception as exc:      # the generator printed bad Python
        return Outcome(INVALID, f"source:{type(exc).__name__}", short(exc))
    kern, traced = ns["kern"], ns["kern_traced"]
    f32 = prog.uses_f32()
    rtol = st.rtol32 if f32 else st.rtol64
    eps = st.eps32 if f32 else st.eps64

    # 2. the traced copy at the inputs, then at inputs moved by a few finite-difference steps
    values = _values(make_args(prog))
    try:
        base = run_traced(traced, values)
        if base.nonfinite:
            raise _Discard("nonfinite")
        if base.maxabs > (st.big32 if f32 else st.big64):
            raise _Discard("overflow")
        margin = st.margin32 if f32 else st.margin64
        if base.margin < margin or base.den < margin:
            raise _Discard("near_singularity")
        rng = np.random.default_rng(prog.seed)
        for k in range(st.perturbations):
            t = run_traced(traced, _perturbed(prog, values, st.perturb_steps * eps * (1 if k % 2 else -1), rng))
            if t.decisions != base.decisions:
                raise _Discard("branch_flip")
            if t.nonfinite or not (t.margin > 0) or not (t.den > 0):
                raise _Discard("near_singularity")
    except _Discard as d:
        return Outcome(DISCARD, d.reason)
    except Exception as exc:
        return Outcome(INVALID, f"traced:{type(exc).__name__}", tb(exc))

    # 3. finite differences of the compiled kernel at h and 2h must agree
    try:
        with np.errstate(all="ignore"):
            pos, kw = make_call(prog)
            fd1 = finite_difference(kern, *pos, seed=prog.ret_seed, eps=eps, **kw)
            pos, kw = make_call(prog)
            fd2 = finite_difference(kern, *pos, seed=prog.ret_seed, eps=2 * eps, **kw)
    except ZeroDivisionError:
        return Outcome(DISCARD, "zero_division")
    except NumbaError as exc:
        return Outcome(INVALID, f"numba:{type(exc).__name__}", short(exc))
    except Exception as exc:
        return Outcome(INVALID, f"fd:{type(exc).__name__}", tb(exc))
    noisy = fd_discard(fd1, fd2, rtol, st.consistency)
    if noisy is not None:
        return noisy

    # 4. build the gradient
    if prog.forms is not None:
        if prog.forms.early:
            forget_recordings(ns, prog)
        return _check_call_forms(kern, ns, prog, st, rtol, eps)
    args = make_args(prog)
    try:
        grad = compile_gradient(kern, *args, memory=prog.memory)
    except UnsupportedError as exc:
        return unsupported(exc)
    except NumbaError as exc:
        if "Failed in nopython mode" in str(exc) and "typing" in str(exc):
            return Outcome(INVALID, f"numba:{type(exc).__name__}", short(exc))
        return Outcome(FAIL, f"crash:{type(exc).__name__}", tb(exc))
    except Exception as exc:
        return Outcome(FAIL, f"crash:{type(exc).__name__}", tb(exc))
    rules = rule_keys(grad.cleaned) if st.collect_rules else frozenset()

    # 5. reverse mode against finite differences, primal arrays
    try:
        with np.errstate(all="ignore"):
            rep = check_gradient(kern, *args, seed=prog.ret_seed, rtol=rtol, eps=eps,
                                 memory=prog.memory)
    except Exception as exc:
        return Outcome(FAIL, f"crash:{type(exc).__name__}", tb(exc), rules=rules)
    if not rep.passed:
        if rep.primal_mismatches and all(a.passed for a in rep.args) \
                and FAST_MATH.search(grad.cleaned) and _primal_within_ulps(kern, prog):
            # LLVM may evaluate fast-math instructions (Numba's own np.cbrt has them) differently
            # in the gradient's module: the last bits of the primal result are not reproducible.
            return Outcome(DISCARD, "fastmath_primal_ulps", str(rep), rules=rules)
        if not rep.primal_mismatches and f32 and _passes_with_f64_reference(kern, prog, rtol, eps):
            # The float32 finite differences were the noisy side: the same check with the
            # reference computed on float64 copies passes (seed 2026009050).
            return Outcome(DISCARD, "fd_noise_f32", str(rep), rules=rules)
        if rep.primal_mismatches:
            cat = "primal_mismatch"
        elif any(not a.passed and np.isnan(np.asarray(a.ad, np.float64)).any() for a in rep.args):
            cat = "nan_gradient"
        else:
            cat = "wrong_gradient"
        return Outcome(FAIL, cat, str(rep), rules=rules)

    return _other_builds(kern, prog, rep, rtol, st, rules)


def _check_call_forms(kern, ns, prog, st, rtol, eps) -> Outcome:
    """Steps 4-6 for a program with callers' forms (callers.py): the call as the program makes
    it (keywords, defaults left out, the return seeded), and with cache=True a second module
    importing the same file, which loads Numba's disk cache, checked the same way."""

    kernels = [("", kern)]
    if prog.forms.cache:
        kernels.append(("[from cache]", None))
    rep = None
    rules = frozenset()
    if st.collect_rules:    # the rules the kernel's instructions need (its optimised IR)
        try:
            rules = rule_keys("\n".join(kern.inspect_llvm().values()))
        except Exception:   # noqa: BLE001 - counting only
            pass
    for tag, k in kernels:
        if k is None:
            k = load(prog, traced=False, path=ns["__path__"])["kern"]
        pos, kw = make_call(prog)
        try:
            with np.errstate(all="ignore"):
                autodiff(k, *pos, seed=prog.ret_seed, **kw)
        except UnsupportedError as exc:
            return unsupported(exc, rules=rules)
        except NumbaError as exc:
            if "Failed in nopython mode" in str(exc) and "typing" in str(exc):
                return Outcome(INVALID, f"numba:{type(exc).__name__}", short(exc))
            return Outcome(FAIL, f"crash:{type(exc).__name__}{tag}", tb(exc), rules=rules)
        except Exception as exc:
            return Outcome(FAIL, f"crash:{type(exc).__name__}{tag}", tb(exc), rules=rules)
        try:
            pos, kw = make_call(prog)
            with np.errstate(all="ignore"):
                rep = check_gradient(k, *pos, seed=prog.ret_seed, rtol=rtol, eps=eps, **kw)
        except Exception as exc:
            return Outcome(FAIL, f"crash:{type(exc).__name__}{tag}", tb(exc), rules=rules)
        if not rep.passed:
            if not rep.primal_mismatches and prog.uses_f32() and \
                    _passes_with_f64_reference(k, prog, rtol, eps):
                return Outcome(DISCARD, "fd_noise_f32", str(rep), rules=rules)
            if rep.primal_mismatches and all(a.passed for a in rep.args) and \
                    _primal_within_ulps(k, prog):
                return Outcome(DISCARD, "fastmath_primal_ulps", str(rep), rules=rules)
            cat = "primal_mismatch" if rep.primal_mismatches else "wrong_gradient"
            return Outcome(FAIL, cat + tag, str(rep), rules=rules)
    return _other_builds(kern, prog, rep, rtol, st, rules)


def _other_builds(kern, prog, rep, rtol, st, rules) -> Outcome:
    """After a passing reverse-mode check `rep`: (5b) the same gradient built with cache="always"
    (every value taped, nothing recomputed), (6) forward mode against reverse mode, each for the
    share of programs the settings select."""
    if selected(prog.seed, 2654435761, st.cache_always):
        problem = _cache_always_check(kern, prog, rep, rtol)
        if problem:
            return Outcome(FAIL, problem[0], problem[1], rules=rules)
    fwd = ""
    if forward_enabled(st) and selected(prog.seed, 40503, st.forward_fraction):
        fwd, problem = forward_check(kern, prog, rep, rtol)
        if problem:
            return Outcome(FAIL, "forward_mismatch", problem, rules=rules, forward=fwd)
    return Outcome(PASS, "", rules=rules, forward=fwd)


def _passes_with_f64_reference(kern, prog, rtol, eps) -> bool:
    try:
        with np.errstate(all="ignore"):
            pos, kw = make_call(prog)
            rep = check_gradient(kern, *pos, seed=prog.ret_seed, rtol=rtol, eps=eps,
                                 fd_dtype=np.float64, **kw)
    except Exception:  # noqa: BLE001 - then the original failure stands
        return False
    return rep.passed


FAST_MATH = re.compile(r"\b(fast|afn|reassoc|arcp)\b")


def _primal_within_ulps(kern, prog, ulps=8) -> bool:
    """Do the arrays after autodiff and after a plain call agree to `ulps` units of roundoff of
    max(1, |value|) (a last-bit difference in a term can cancel into a small result)?"""
    plain, ad = make_args(prog), make_args(prog)
    pos, kw = split_call(prog, _values(plain))
    kern(*pos, **kw)
    pos, kw = split_call(prog, ad)
    autodiff(kern, *pos, seed=prog.ret_seed, **kw)
    for p, a in zip(plain, ad):
        x, y = np.asarray(p.value), np.asarray(a.value)
        if x.dtype.kind != "f":
            if not np.array_equal(x, y):
                return False
            continue
        gap = ulps * np.finfo(x.dtype).eps * np.maximum(1.0, np.maximum(np.abs(x), np.abs(y)))
        if not np.all((np.abs(x - y) <= gap) | (np.isnan(x) & np.isnan(y))):
            return False
    return True


def _cache_always_check(kern, prog, rep, rtol):
    """autodiff(..., cache="always") against the finite differences of `rep`; returns
    (category, detail) of a failure or None."""
    args = make_args(prog)
    pos, kw = split_call(prog, args)
    try:
        with np.errstate(all="ignore"):
            result = autodiff(kern, *pos, seed=prog.ret_seed, cache="always", **kw)
    except (UnsupportedError, ValueError, TypeError):
        return None          # not supported with this cache mode: not a wrong gradient
    except Exception as exc:
        return f"crash:{type(exc).__name__}[cache=always]", tb(exc)
    result = _by_param(prog, result)
    plain = make_args(prog)
    ppos, pkw = split_call(prog, _values(plain))
    kern(*ppos, **pkw)
    lines = []
    for k, (p, a) in enumerate(zip(prog.params, args)):
        if p.kind == "arr" and not np.array_equal(np.asarray(a.value), np.asarray(plain[k].value),
                                                  equal_nan=True):
            return "primal_mismatch[cache=always]", f"argument {k} differs from a plain call"
        if p.ann not in ("dup", "active"):
            continue
        fd = np.asarray(rep[p.name].fd, np.float64)
        got = np.asarray(a.shadow if p.ann == "dup" else result[k], np.float64)
        err = np.abs(got - fd)
        if not np.all(err <= tolerance(fd, rtol)):
            lines.append(f"argument {k}: autodiff(cache='always') {got!r}, finite differences "
                         f"{fd!r}, autodiff(cache='minimal') {np.asarray(rep[p.name].ad)!r}")
    if lines:
        return "wrong_gradient[cache=always]", "\n".join(lines)
    return None


def _by_param(prog, result):
    """autodiff's result (call order) -> one entry per parameter, in parameter order."""
    if prog.forms is None:
        return result
    pos, kw = split_call(prog, [p.name for p in prog.params])
    found = dict(zip(pos + list(kw.values()), result))
    return tuple(found.get(p.name) for p in prog.params)


# ---------------------------------------------------------------------------------------------
# Triage: is a failure explained by a known bug?
# ---------------------------------------------------------------------------------------------

def _ablate_reduce_minmax(prog):
    """np.max/np.min -> np.sum."""

    if not any(isinstance(n, Reduce) and n.fn in ("max", "min") for n in walk_all(prog)):
        return None
    c = copy.deepcopy(prog)
    for n in walk_all(c):
        if isinstance(n, Reduce) and n.fn in ("max", "min"):
            n.fn = "sum"
    return c


# name -> (failure categories it explains, program transform removing its construct, or
# returning None when the construct is absent)
KNOWN_BUGS = {
    # tests/regressions/test_fuzz_lifetime_marker_not_on_alloca.py
    "lifetime markers of np.max/np.min allocas": (("crash:RuntimeError",), _ablate_reduce_minmax),
    # (fixed: np.max/np.min dropped the first element's derivative,
    #  tests/regressions/test_fuzz_np_max_first_element.py)
}


def triage(prog: Program, outcome: Outcome, settings: Optional[Settings] = None) -> str:
    """The known bug whose construct, removed, makes the failure go away ("" if none does)."""
    if not isinstance(prog, Program):
        return ""
    for name, (categories, ablate) in KNOWN_BUGS.items():
        if outcome.category not in categories:
            continue
        c = ablate(prog)
        if c is None:
            continue
        if check_program(c, settings).status == PASS:
            return name
    return ""


# ---------------------------------------------------------------------------------------------
# Forward mode (switched on automatically once `autodiff(..., mode=Forward)` works)
# ---------------------------------------------------------------------------------------------

_forward_state: dict = {}


def forward_available() -> bool:
    """Whether `autodiff(kernel, ..., mode=Forward)` is implemented (tried once per process on a
    tiny kernel: NotImplementedError means not yet)."""
    if "ok" not in _forward_state:


        @njit
        def probe(x):
            x[0] = x[0] * 2.0

        x = np.ones(1)
        try:
            autodiff(probe, Duplicated(x, np.ones(1)), mode=Forward)
            _forward_state["ok"] = True
        except NotImplementedError:
            _forward_state["ok"] = False
        except Exception:          # exists but the probe failed: let the per-kernel check report
            _forward_state["ok"] = True
    return _forward_state["ok"]


def forward_enabled(st: Settings) -> bool:
    if st.forward is None:
        return forward_available()
    return bool(st.forward)


def _scalar_with_tangent(value, u):
    try:
        return Active(value, u)          # forward mode's Active(x, dx)
    except TypeError:
        return Duplicated(value, u)


def forward_check(kern, prog: Program, rep, rtol):
    """Compare <v, J u> (forward mode) with <J^T v, u> (reverse mode, from `rep`).

    v is the reverse seed: the shadows of the Duplicated arrays and the return seed. u is a random
    tangent on every Duplicated array and Active scalar. Forward-mode convention: `Duplicated(x,
    dx)` -- dx enters holding the tangent of x's initial value and leaves holding the tangent of
    x's final value; a float scalar carries its tangent as `Active(a, da)` (or, if Active takes
    no tangent, `Duplicated(a, da)`); the result is the tangent of the returned float (a float,
    or a tuple whose first float entry is), or None.
    Returns ("checked" | "skipped:<why>", problem text or "").
    """
    rng = np.random.default_rng(prog.seed ^ 0x5EED)
    reverse_dot = rev_abs = 0.0
    fwd_args = []
    v_dot = []
    for k, (p, ann) in enumerate(zip(prog.params, make_args(prog))):
        if isinstance(ann, Duplicated):
            u = rng.standard_normal(np.shape(ann.value))
            du = layout_array(u.astype(ann.shadow.dtype), p.layout)
            reverse_dot += float(np.sum(np.asarray(rep[p.name].ad, np.float64) * u))
            rev_abs += float(np.sum(np.abs(np.asarray(rep[p.name].ad, np.float64) * u)))
            v_dot.append((k, np.asarray(p.shadow, np.float64)))
            fwd_args.append(Duplicated(ann.value, du))
        elif isinstance(ann, Active):
            u = float(rng.standard_normal())
            reverse_dot += float(rep[p.name].ad) * u
            rev_abs += abs(float(rep[p.name].ad) * u)
            fwd_args.append(_scalar_with_tangent(ann.value, type(ann.value)(u)))
        else:
            fwd_args.append(ann)
    try:
        pos, kw = split_call(prog, fwd_args)
        result = autodiff(kern, *pos, mode=Forward, **kw)
    except NotImplementedError as exc:
        return f"skipped:{short(exc)[:80]}", ""
    except UnsupportedError as exc:
        return f"unsupported:{normalize_construct(getattr(exc, 'construct', str(exc)))}", ""
    except (TypeError, ValueError) as exc:
        return f"skipped:api:{type(exc).__name__}", ""
    except Exception as exc:
        return "checked", f"forward mode raised {tb(exc)}"
    if prog.forms is not None and prog.forms.ret is not None:
        forward_dot, fwd_abs = _seed_dot(prog.ret_seed, result)
    else:
        tangent_ret = 0.0
        if isinstance(result, (float, np.floating)):
            tangent_ret = float(result)
        elif isinstance(result, (tuple, list)):
            floats = [r for r in result if isinstance(r, (float, np.floating))]
            tangent_ret = float(floats[0]) if floats else 0.0
        forward_dot = prog.ret_seed * tangent_ret if prog.returns else 0.0
        fwd_abs = abs(forward_dot)
    for k, v in v_dot:
        terms = v * np.asarray(fwd_args[k].shadow, np.float64)
        forward_dot += float(np.sum(terms))
        fwd_abs += float(np.sum(np.abs(terms)))
    scale = max(1.0, rev_abs, fwd_abs)
    if not abs(forward_dot - reverse_dot) <= 10 * rtol * scale:
        return "checked", (f"<v, J u> forward = {forward_dot!r}, <J^T v, u> reverse = "
                           f"{reverse_dot!r}")
    return "checked", ""


def _seed_dot(seed, tangent):
    """(<seed, tangent>, sum of |terms|) over the leaves of a return value's structure."""
    if seed is None or tangent is None:
        return 0.0, 0.0
    if isinstance(seed, tuple):
        parts = [_seed_dot(s, t) for s, t in zip(seed, tangent)]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    terms = np.asarray(seed, np.float64) * np.asarray(tangent, np.float64)
    return float(np.sum(terms)), float(np.sum(np.abs(terms)))
