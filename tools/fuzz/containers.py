"""The `lists`, `dicts` and `optional` profiles: kernels on Numba's typed containers and
Optional returns, checked in both modes.

- `lists`: a `numba.typed.List` of float64 arrays of unequal lengths passed as
  `Duplicated(lst, shadow_lst)`, or a list the kernel builds from its inputs (`typed.List()`,
  then `append` of slices `x[b[i]:b[i + 1]]` (views: writing an item writes `x`), of
  temporaries `x[b[i]:b[i + 1]] * 2.0` / `np.tanh(...)`, of rows `X[i]`, or of separate
  arrays). The items are read and written in loops over `range(len(series))` or
  `prange(len(series))`: element by element (`s[t]`, `series[i][t]`), by array expressions
  (`np.sum(np.tanh(s * w) * s)`), overwritten in place (sometimes in a time loop), read with a
  neighbour item (`series[(i + 1) % len(series)]`, only when nothing is written), or pairwise
  (`series[i]` against `series[j]`). An Active weight `w`; the output `out[i]`; sometimes the
  sum returned.
- `dicts`: a `numba.typed.Dict` of named parameter arrays (string keys: `"w"`, `"b"`, and
  `"c"`, a float kept as a one-element array) as `Duplicated(d, shadow_d)`, with a Const dict
  of float hyperparameters (`hyper["lr"]`); values looked up once or inside the loops (serial
  or `prange`), updated in place (`w[j] = w[j] - lr * ...`, `params["b"][j] += ...`), sometimes
  in a loop of steps; the loss returned or not.
- `optional`: `kern(x, y, w_max=None)` returns a tuple with an Optional(float) leaf
  (`w = None`, then `w = E(s) * w_max` under a test on `w_max`), alone or with floats and an
  int (`(s, w)`, `(s, (w, n))`, `(w, s)`, `w`), sometimes adding `w` back into `s` when it is
  not None; called with `w_max` left out, None, a positive float (the leaf is a float) or a
  negative one (None at run time). The seed is a float for every float and Optional leaf.

Checks (`check_container`): the plain call (non-finite or huge values discard); central finite
differences at h and 2h agree ("fd_noise" otherwise); `check_gradient` with random shadows and
return seed (reverse mode against finite differences, primal arrays against a plain call:
"wrong_gradient", "nan_gradient", "primal_mismatch"); then forward mode along random tangents
against reverse mode, <v, J u> = <J^T v, u> over every item of every container and every
return leaf ("forward_mismatch"; forward mode refusing is counted in `Outcome.forward`).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from numba import typed, types
from numba.core.errors import NumbaError

from enzyme_py import Active, Const, Duplicated, Forward, UnsupportedError, autodiff
from enzyme_py.check import check_gradient, finite_difference

from .outcome import (DISCARD, FAIL, INVALID, PASS, Outcome, gradient_failure,
                      normalize_construct, run_source, short, tb, tolerance, unsupported)
from .parallel import Exprs, render_expr

FAMILIES = {"lists": ("list", "built"), "dicts": ("dict",), "optional": ("optional",)}


@dataclass
class Arg:
    """One argument: kind "list" (list of arrays), "dict" (str -> array), "hyper" (Const
    str -> float dict), "arr" (Duplicated array), "active" (float), "const" (anything),
    "kw" (Const, by keyword)."""
    name: str
    kind: str
    value: object


@dataclass
class ContainerKernel:
    """A generated kernel of the `lists`, `dicts` or `optional` profile."""
    seed: int
    family: str
    source: str
    args: list
    ret_seed: object = None       # None: the return value is not in L
    features: frozenset = field(default_factory=frozenset)
    forms = None                  # (the default profile's call forms: none here)


class _Gen:
    def __init__(self, seed):
        self.seed = seed
        self.r = random.Random(seed)
        self.nr = np.random.default_rng(seed)
        self.ex = Exprs(self.r, helper=False, p_kink=0.0)
        self.features = set()

    def expr(self, leaves, depth=2):
        """A random expression containing every leaf."""
        leaves = [f"({x})" if " " in x else x for x in leaves]
        return render_expr(self.ex.make(leaves, depth, must=leaves))

    def loop(self, n):
        par = self.r.random() < 0.4
        if par:
            self.features.add("prange")
        return f"{'prange' if par else 'range'}({n})", par

    def vals(self, n, lo=-1.2, hi=1.2):
        return np.round(self.nr.uniform(lo, hi, n), 6)


# ---------------------------------------------------------------------------------------------
# lists
# ---------------------------------------------------------------------------------------------

def _items_body(g: _Gen, ind, writes, weight, n_items="len(series)"):
    """The loop over the items of `series`: lines at indent `ind`, and whether it is a prange."""
    rng, lines = g.r, []
    loop, par = g.loop(n_items)
    kind = rng.choice(["elements", "elements", "arrexpr", "pairwise"] + (["neighbour"] if not writes else []))
    if kind == "pairwise" and writes and par:     # iteration i would read items others write
        kind = "elements"
    g.features.add(kind)
    lines.append(f"{ind}for i in {loop}:")
    ind2 = ind + "    "
    lines.append(f"{ind2}s = series[i]")
    if writes:
        e = g.expr(["s[t]"] + weight)
        if rng.random() < 0.5:
            lines += [f"{ind2}for t in range(s.size):",
                      f"{ind2}    s[t] = 0.5 * s[t] + 0.2 * math.tanh({e})"]
        else:
            g.features.add("write_indexed")
            e = e.replace("s[t]", "series[i][t]")
            lines += [f"{ind2}for t in range(s.size):",
                      f"{ind2}    series[i][t] = 0.5 * series[i][t] + 0.2 * math.tanh({e})"]
    lines.append(f"{ind2}acc = 0.0")
    if kind == "elements":
        lines += [f"{ind2}for t in range(s.size):", f"{ind2}    acc += {g.expr(['s[t]'] + weight)}"]
    elif kind == "arrexpr":
        f = rng.choice(["np.tanh", "np.sin", "np.cos"])
        w = weight[0] if weight else "0.7"
        lines.append(f"{ind2}acc = np.sum({f}(s * {w}) * s)")
    elif kind == "neighbour":
        lines += [f"{ind2}r = series[(i + 1) % len(series)]", f"{ind2}for t in range(s.size):",
                  f"{ind2}    acc += {g.expr(['s[t]', 'r[t % r.size]'] + weight)}"]
    else:                   # pairwise: every other item, over the shorter length
        lines += [f"{ind2}for j in range(len(series)):",
                  f"{ind2}    if j != i:", f"{ind2}        r = series[j]",
                  f"{ind2}        for t in range(min(s.size, r.size)):",
                  f"{ind2}            acc += {g.expr(['s[t]', 'r[t]'] + weight)}"]
    lines.append(f"{ind2}out[i] = acc")
    return lines, par


def _list_kernel(g: _Gen, built: bool):
    rng = g.r
    n_items = rng.choice([1, 2, 3, 4])
    lengths = [rng.choice([1, 2, 3, 5, 7]) for _ in range(n_items)]
    active = rng.random() < 0.6
    weight = ["w"] if active else []
    args, head = [], ["    tot = 0.0"]
    if not built:
        g.features.add("argument")
        args.append(Arg("series", "list", [g.vals(n) for n in lengths]))
    else:
        src = rng.choice(["view", "view", "temp", "rows", "arrays"])
        g.features.add("built_" + src)
        if src == "rows":
            m = max(lengths)
            args.append(Arg("X", "arr", g.vals((n_items, m)).reshape(n_items, m)))
            head += ["    series = typed.List()", "    for i in range(X.shape[0]):",
                     "        series.append(X[i])"]
        elif src == "arrays":
            names = [f"a{k}" for k in range(n_items)]
            args += [Arg(nm, "arr", g.vals(n)) for nm, n in zip(names, lengths)]
            head += ["    series = typed.List()"] + [f"    series.append({nm})" for nm in names]
        else:
            bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
            args.append(Arg("x", "arr", g.vals(int(bounds[-1]))))
            args.append(Arg("bounds", "const", bounds))
            item = "x[bounds[i]:bounds[i + 1]]"
            if src == "temp":
                item = rng.choice([f"{item} * 2.0", f"np.tanh({item})"])
            head += ["    series = typed.List()", "    for i in range(bounds.size - 1):",
                     f"        series.append({item})"]
    if active:
        args.append(Arg("w", "active", round(float(g.nr.uniform(0.3, 1.2)), 6)))
    args.append(Arg("out", "arr", np.zeros(n_items)))
    writes = rng.random() < 0.4
    steps = rng.choice([0, 0, 2, 3]) if writes else 0
    if writes:
        g.features.add("writes")
    ind = "        " if steps else "    "
    body, par = _items_body(g, ind, writes, weight)
    if steps:
        g.features.add("steps")
        body = ["    for step in range(%d):" % steps] + body
    returns = rng.random() < 0.5
    tail = []
    if returns:
        tail = ["    for i in range(out.size):", f"        tot += out[i] * {rng.choice(['0.5', '1.5', '-0.75'])}",
                "    return tot"]
    params = ", ".join(a.name for a in args)
    return params, head + body + tail, args, returns, par


# ---------------------------------------------------------------------------------------------
# dicts
# ---------------------------------------------------------------------------------------------

def _dict_kernel(g: _Gen):
    rng = g.r
    n, nw, nb = rng.choice([2, 3, 5]), rng.choice([2, 3]), rng.choice([1, 2, 4])
    params = {"w": g.vals(nw), "b": g.vals(nb), "c": np.round(g.nr.uniform(0.5, 1.5, 1), 6)}
    hyper = rng.random() < 0.6
    args = [Arg("params", "dict", params)]
    if hyper:
        g.features.add("hyper")
        args.append(Arg("hyper", "hyper", {"lr": 0.3, "decay": 0.9}))
    args += [Arg("x", "const", g.vals(n)), Arg("out", "arr", np.zeros(n))]
    lookup_in_loop = rng.random() < 0.4
    lines = ["    tot = 0.0"]
    if lookup_in_loop:
        g.features.add("lookup_in_loop")
        W, B, C = 'params["w"]', 'params["b"]', 'params["c"]'
    else:
        lines += ['    w = params["w"]', '    b = params["b"]', '    c = params["c"]']
        W, B, C = "w", "b", "c"
    lr = 'hyper["lr"]' if hyper else "0.3"
    steps = rng.choice([0, 0, 2, 3])
    ind = "        " if steps else "    "
    if steps:
        g.features.add("steps")
        lines.append(f"    for step in range({steps}):")
    loop, par = g.loop("x.size")
    e = g.expr([f"{W}[0] * x[i] + {W}[{nw - 1}]", f"{B}[i % {B}.size]"])
    lines += [f"{ind}for i in {loop}:", f"{ind}    out[i] = ({e}) * {C}[0]"]
    update = rng.choice(["", "w", "b", "both"]) if steps or rng.random() < 0.6 else ""
    if update in ("w", "both"):
        g.features.add("update_w")
        u = g.expr([f"{W}[j]", "out[j % out.size]"])
        lines += [f"{ind}for j in range({W}.size):",
                  f"{ind}    {W}[j] = {W}[j] - {lr} * math.tanh({u})"]
    if update in ("b", "both"):
        g.features.add("update_b")
        u = g.expr(['params["b"][j]', "out[j % out.size]"])
        lines += [f"{ind}for j in range({B}.size):",
                  f'{ind}    params["b"][j] += {lr} * 0.5 * math.sin({u})']
    returns = rng.random() < 0.6
    if returns:
        decay = 'hyper["decay"]' if hyper else "0.9"
        lines += ["    for i in range(out.size):", f"        tot += {decay} * out[i] * out[i]",
                  "    return tot"]
    return ", ".join(a.name for a in args), lines, args, returns, par


# ---------------------------------------------------------------------------------------------
# optional returns
# ---------------------------------------------------------------------------------------------

TESTS = {"is_not_none": "w_max is not None", "positive": "w_max is not None and w_max > 0.0",
         "data": "w_max is not None and x[0] > 0.0"}
RETURNS = {"pair": "return s, w", "nested": "return s, (w, x.size)", "first": "return w, s",
           "alone": "return w"}


def _optional_kernel(g: _Gen):
    rng = g.r
    n = rng.choice([1, 3, 4, 6])
    x = g.vals(n)
    x[0] = np.copysign(max(abs(x[0]), 0.3), x[0])      # the data test stays away from its edge
    args = [Arg("x", "arr", x), Arg("y", "arr", g.vals(n))]
    loop, par = g.loop("x.size")
    test = rng.choice(sorted(TESTS))
    ret = rng.choice(sorted(RETURNS))
    use = rng.random() < 0.3
    call = rng.choice(["omitted", "none", "positive", "negative"])
    g.features |= {"test_" + test, "ret_" + ret, "call_" + call} | ({"use"} if use else set())
    if call == "none":
        args.append(Arg("w_max", "kw", None))
    elif call in ("positive", "negative"):
        v = round(float(g.nr.uniform(0.5, 2.0)), 6) * (1 if call == "positive" else -1)
        args.append(Arg("w_max", "kw" if rng.random() < 0.5 else "const", v))
    lines = ["    s = 0.0", f"    for i in {loop}:", f"        s += {g.expr(['x[i]', 'y[i]'])}",
             "    w = None", f"    if {TESTS[test]}:",
             f"        w = ({g.expr(['s'], 1)}) * w_max"]
    if use:
        lines += ["    if w is not None:", "        s = s + 0.5 * w"]
    lines.append("    " + RETURNS[ret])
    return "x, y, w_max=None", lines, args, True, par


def _optional_seed(k_ret, g: _Gen):
    def f():
        return float(round(g.nr.uniform(0.5, 1.5), 4))
    return {"pair": lambda: (f(), f()), "nested": lambda: (f(), (f(), None)),
            "first": lambda: (f(), f()), "alone": f}[k_ret]()


def generate_containers(seed: int, profile: str) -> ContainerKernel:
    g = _Gen(seed)
    family = g.r.choice(FAMILIES[profile])
    if family in ("list", "built"):
        params, lines, args, returns, par = _list_kernel(g, family == "built")
    elif family == "dict":
        params, lines, args, returns, par = _dict_kernel(g)
    else:
        params, lines, args, returns, par = _optional_kernel(g)
    deco = "@njit(parallel=True)" if par else "@njit"
    src = "\n".join(["import math", "import numpy as np", "from numba import njit, prange, typed",
                     "", "", deco, f"def kern({params}):"] + lines + [""])
    if family == "optional":
        ret_seed = _optional_seed(next(f[4:] for f in g.features if f.startswith("ret_")), g)
    else:
        ret_seed = float(round(g.nr.uniform(0.5, 1.5), 4)) if returns else None
    return ContainerKernel(seed, family, src, args, ret_seed, frozenset(g.features))


# ---------------------------------------------------------------------------------------------
# arguments
# ---------------------------------------------------------------------------------------------

def _typed_list(arrays):
    return typed.List([np.array(a, np.float64) for a in arrays])


def _typed_dict(named, value_type=None):
    d = typed.Dict.empty(types.unicode_type, value_type or types.float64[::1])
    for key, v in named.items():
        d[key] = np.array(v, np.float64) if value_type is None else v
    return d


def annotated(k: ContainerKernel, shadow=None, tangent=None):
    """(positional, keyword) annotated arguments on fresh copies. `shadow(path, array)` gives
    the shadow of a differentiated array (zeros when None); `tangent(name)` the tangent of an
    Active float (none when None)."""

    sh = shadow or (lambda path, a: np.zeros_like(a))
    pos, kw = [], {}
    for a in k.args:
        if a.kind == "list":
            items = [np.array(v, np.float64) for v in a.value]
            pos.append(Duplicated(_typed_list(items),
                                  _typed_list([sh((a.name, m), v) for m, v in enumerate(items)])))
        elif a.kind == "dict":
            pos.append(Duplicated(_typed_dict(a.value),
                                  _typed_dict({key: sh((a.name, key), np.array(v, np.float64))
                                               for key, v in a.value.items()})))
        elif a.kind == "hyper":
            pos.append(Const(_typed_dict(a.value, types.float64)))
        elif a.kind == "arr":
            v = np.array(a.value, np.float64)
            pos.append(Duplicated(v, sh((a.name,), v)))
        elif a.kind == "active":
            t = tangent(a.name) if tangent else None
            pos.append(Active(a.value) if t is None else Active(a.value, t))
        elif a.kind == "const":
            pos.append(Const(a.value.copy() if isinstance(a.value, np.ndarray) else a.value))
        else:
            kw[a.name] = Const(a.value)
    return pos, kw


def _arrays(ann):
    """{path: array} of every differentiated array (list items, dict values) of annotated args,
    and of their shadows: (values, shadows)."""
    vals, shads = {}, {}
    for m, a in enumerate(ann):
        if not isinstance(a, Duplicated):
            continue
        v, s = a.value, a.shadow
        if isinstance(v, np.ndarray):
            vals[(m,)], shads[(m,)] = v, s
        elif hasattr(v, "keys"):
            for key in v.keys():
                vals[(m, key)], shads[(m, key)] = v[key], s[key]
        else:
            for i in range(len(v)):
                vals[(m, i)], shads[(m, i)] = v[i], s[i]
    return vals, shads


def load(k: ContainerKernel) -> dict:
    return run_source(k.source, f"<tools.fuzz containers seed={k.seed}>", f"tools_fuzz_containers_{k.seed}")


def _leaves(v):
    """The float leaves of a return value (None for None and int leaves), flattened."""
    if isinstance(v, tuple):
        return [x for item in v for x in _leaves(item)]
    return [float(v) if isinstance(v, float) else None]


def _seed_dot(seed, value) -> float:
    return sum(s * t for s, t in zip(_leaves(seed), _leaves(value))
               if s is not None and t is not None)


# ---------------------------------------------------------------------------------------------
# the check
# ---------------------------------------------------------------------------------------------

def check_container(k: ContainerKernel, st) -> "Outcome":    # noqa: F821 - checker.Outcome


    try:
        kern = load(k)["kern"]
    except Exception as exc:       # noqa: BLE001 - the generator printed bad Python
        return Outcome(INVALID, f"source:{type(exc).__name__}", short(exc))
    pos, kw = annotated(k)
    try:
        with np.errstate(all="ignore"):
            ret = kern(*[a.value for a in pos], **{n: a.value for n, a in kw.items()})
    except NumbaError as exc:
        return Outcome(INVALID, f"numba:{type(exc).__name__}", short(exc))
    except Exception as exc:       # noqa: BLE001
        return Outcome(INVALID, f"plain:{type(exc).__name__}", tb(exc))
    vals = list(_arrays(pos)[0].values()) + [np.array([x]) for x in _leaves(ret) if x is not None]
    if not all(np.all(np.isfinite(v)) for v in vals):
        return Outcome(DISCARD, "nonfinite")
    if max((float(np.max(np.abs(v))) for v in vals if v.size), default=0.0) > st.big64:
        return Outcome(DISCARD, "overflow")
    rtol, eps = st.rtol64, st.eps64
    g = np.random.default_rng(k.seed ^ 0x5EED)
    v = {}

    def seeds(path, a):
        v[path] = np.round(g.standard_normal(a.shape), 4)
        return v[path].copy()
    pos, kw = annotated(k, seeds)
    try:
        with np.errstate(all="ignore"):
            fds = [finite_difference(kern, *annotated(k, lambda p, a: v[p].copy())[0],
                                     seed=k.ret_seed, eps=h, **kw) for h in (eps, 2 * eps)]
    except Exception as exc:       # noqa: BLE001
        return Outcome(INVALID, f"fd:{type(exc).__name__}", tb(exc))
    for a, b in zip(*fds):
        if a is None:
            continue
        fa, fb = np.asarray(a, np.float64), np.asarray(b, np.float64)
        if not (np.all(np.isfinite(fa)) and np.all(np.isfinite(fb))):
            return Outcome(DISCARD, "nonfinite")
        if np.any(np.abs(fa - fb) > st.consistency * tolerance(fa, rtol)):
            return Outcome(DISCARD, "fd_noise")
    try:
        with np.errstate(all="ignore"):
            rep = check_gradient(kern, *pos, seed=k.ret_seed, rtol=rtol, eps=eps, **kw)
    except UnsupportedError as exc:
        return unsupported(exc)
    except Exception as exc:       # noqa: BLE001
        return Outcome(FAIL, f"crash:{type(exc).__name__}", tb(exc))
    if not rep.passed:
        return Outcome(FAIL, gradient_failure(rep), str(rep))
    fwd, problem = forward_check(kern, k, v, rtol)
    if problem:
        return Outcome(FAIL, "forward_mismatch", problem, forward=fwd)
    return Outcome(PASS, forward=fwd)


def forward_check(kern, k: ContainerKernel, v, rtol, weights=None):
    """<v, J u> from forward mode against <J^T v, u> from reverse mode, v the shadows `v` and
    the return seed, u random tangents; ("checked" | "unsupported:...", problem or "").
    `weights` replaces v on the forward side (a test that the comparison can fail)."""

    g = np.random.default_rng(k.seed ^ 0xF0D)
    u, ua = {}, {}

    def tangents(path, a):
        u[path] = g.standard_normal(a.shape)
        return u[path].copy()

    def active_tangent(name):
        ua[name] = float(g.standard_normal())
        return ua[name]
    rpos, kw = annotated(k, lambda p, a: v[p].copy())
    fpos, _ = annotated(k, tangents, active_tangent)
    try:
        with np.errstate(all="ignore"):
            grads = autodiff(kern, *rpos, seed=k.ret_seed, **kw)
            tret = autodiff(kern, *fpos, mode=Forward, **kw)
    except UnsupportedError as exc:
        return f"unsupported:{normalize_construct(getattr(exc, 'construct', str(exc)))}", ""
    except Exception as exc:       # noqa: BLE001
        return "checked", f"forward mode raised {tb(exc)}"
    names = [a.name for a in k.args if a.kind != "kw"]
    rev = sum(float(grads[names.index(n)]) * t for n, t in ua.items())
    terms = [abs(rev)]
    for (m, *rest), shadow in _arrays(rpos)[1].items():
        key = (names[m], *rest)
        terms.append(float(np.sum(np.abs(shadow * u[key]))))
        rev += float(np.sum(shadow * u[key]))
    fwd = _seed_dot(k.ret_seed, tret) if k.ret_seed is not None else 0.0
    for (m, *rest), tangent in _arrays(fpos)[1].items():
        key = (names[m], *rest)
        w = (weights or v)[key]
        fwd += float(np.sum(w * tangent))
        terms.append(float(np.sum(np.abs(w * tangent))))
    if not abs(fwd - rev) <= 10 * rtol * max(1.0, *terms):
        return "checked", f"<v, J u> forward = {fwd!r}, <J^T v, u> reverse = {rev!r}"
    if k.family == "optional" and not _same_none(tret, k, kern):
        return "checked", f"forward tangent {tret!r}: None where the value is not, or not where it is"
    return "checked", ""


def _same_none(tret, k, kern) -> bool:
    """Forward mode's tangent leaves are None exactly where the plain call's float leaves are."""
    pos, kw = annotated(k)
    ret = kern(*[a.value for a in pos], **{n: a.value for n, a in kw.items()})
    return [x is None for x in _leaves(tret)] == [x is None for x in _leaves(ret)]
