"""The `parallel` profile: random `@njit(parallel=True)` kernels built from race-free `prange`
templates (docs/parallel.md), and their checks.

Every template writes, in iteration `i`, only the iteration's own outputs (`T[i]`, row `X[i, :]`,
`g[e]`) and reads the array it writes only there; any other array it may read anywhere
(neighbours, gathers through a Const index array, every element). Reductions are `s += ...`
into the float the kernel returns. The templates:

| name | the loop |
|---|---|
| map | `T[i] = E(...)`, T an output or updated in place (`T[i] = T[i] + c * tanh(E)`) |
| stencil | `T[i] = E(S[i - 1], S[i], S[i + 1])` over the interior, or periodic (`S[(i + 1) % n]`) |
| heat | two loops: `tmp[i] = S[i] + a * (S[i-1] - 2 S[i] + S[i+1])`, then `S[i] = tmp[i]` |
| gather | `g[e] = E(S[idx[e, 0]], S[idx[e, 1]])` |
| reduce | `s += E(S[i], ...)`, or over a gather's pairs, or a row's serial sum |
| pairwise | `acc += E(S[i], S[j])` over all j (n-body), then `T[i] = E(acc, ...)` |
| rows | `X[i, j] = X[i, j] + c * tanh(E(X[i, j], X[i, j - 1], v[j]))`: each row in place |
| matvec | `h[i] = E(sum_j X[i, j] * E(v[j]))` |
| stencil2d | `Y[i, j] = E(X[i +- 1, j], X[i, j +- 1], X[i, j])` |
| temp | a per-iteration `np.empty(3)` / `np.zeros(3)` filled and read back |
| scratch | `scr = np.empty((numba.get_num_threads(), 3))` before the loop; iteration i fills, or |
| | zeroes and adds into, its thread's row `scr[tid, k]` (`tid = numba.get_thread_id()`), reads it |
| columns | `X[i, 0] = X[i, 0] + c * tanh(E(X[(i + 1) % r, 1], X[r - 1 - i, 2]))` (atomic updates) |
| reduce_other | `q *= ...` or `q = max(q, ...)`: refused by enzyme_py (must be a clear UnsupportedError) |
| arrexpr | array expressions (`np.tanh(S) * a + S * S`, 1-D or 2-D) into `T[:]` or `s += np.sum(...)` |

Expressions draw smooth functions (arguments mapped into their domains), + - *, bounded
divisions, an `@njit` helper, and rarely `abs`/`min`/`max` (kinks: the finite-difference
consistency check discards kernels near one). Loops that update arrays in place are sometimes
wrapped in a time loop (`for t in range(steps)`).

`check_parallel(kernel)` -> Outcome:
1. the serial kernel `njit(kern.py_func)`: non-finite or huge values discard the kernel;
2. central finite differences of the serial kernel at h and 2h must agree ("fd_noise");
3. the parallel gradient must build (UnsupportedError: "unsupported"); `check_gradient` of the
   serial kernel (reverse mode against finite differences, primal arrays against a plain call;
   "wrong_gradient[serial]"); then the parallel gradient with 1 and 2 threads
   (`numba.set_num_threads`) against the serial one, rtol 1e-9 (only the order of sums
   differs), and its primal arrays against the serial kernel's ("serial_mismatch[threads=k]").
   So the parallel gradient is checked against finite differences through the serial one,
   which matches them to the checker's tolerance. The plain parallel kernel is never
   compiled: its parfor compile was the most expensive step of a check;
4. forward mode with 1 and 2 threads: <v, J u> against <J^T v, u> from reverse mode
   ("forward_mismatch[threads=k]"); forward mode refusing counts in `Outcome.forward`;
5. for a tenth of the kernels, `deterministic=True` on 2 threads twice: identical bits, and the
   serial gradient's values ("nondeterministic"); refusing it (an atomic update) is counted.
"""
from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import List, Optional

import numba
import numpy as np
from numba import njit
from numba.core.errors import NumbaError

from enzyme_py import UnsupportedError
from enzyme_py.annotations import Active, Const, Duplicated, Forward
from enzyme_py.api import autodiff, compile_gradient
from enzyme_py.check import check_gradient, finite_difference
from .outcome import (DISCARD, FAIL, INVALID, PASS, Outcome, fd_discard, gradient_failure,
                      normalize_construct, run_source, selected, short, tb, unsupported)
from .program import layout_array

# ---------------------------------------------------------------------------------------------
# Expressions: ("leaf", text) | ("un", fmt, a) | ("bin", op, a, b) | ("call", name, a, b)
# ---------------------------------------------------------------------------------------------

SMOOTH = ["math.sin({0})", "math.cos({0})", "math.tanh({0})", "math.atan({0})",
          "math.exp(0.5 * math.tanh({0}))", "math.log(1.0 + {0} * {0})",
          "math.sqrt(1.0 + {0} * {0})", "math.erf({0})", "({0} * {0})",
          "math.log1p(math.exp(math.tanh({0})))", "1.0 / (1.5 + {0} * {0})"]
KINKS = ["abs({0})"]
KINKS2 = ["max({0}, {1})", "min({0}, {1})"]
CONSTS = ["0.5", "1.5", "-0.75", "0.25", "2.0", "0.3"]


def render_expr(e) -> str:
    tag = e[0]
    if tag == "leaf":
        return e[1]
    if tag == "un":
        return e[1].format(render_expr(e[2]))
    if tag == "un2":
        return e[1].format(render_expr(e[2]), render_expr(e[3]))
    if tag == "bin":
        return f"({render_expr(e[2])} {e[1]} {render_expr(e[3])})"
    if tag == "call":
        return f"{e[1]}({render_expr(e[2])}, {render_expr(e[3])})"
    raise ValueError(e)


def expr_leaves(e) -> list:
    if e[0] == "leaf":
        return [e]
    return [x for c in e[2:] for x in expr_leaves(c)]


class Exprs:
    def __init__(self, rnd: random.Random, helper: bool, p_kink: float):
        self.rnd, self.helper, self.p_kink = rnd, helper, p_kink

    def make(self, leaves: List[str], depth: int = 3, must: Optional[List[str]] = None):
        """A random expression over `leaves`, containing every leaf of `must`."""
        e = self._make(leaves, depth)
        for m in must or ():
            if m not in render_expr(e):
                e = ("bin", self.rnd.choice(["+", "*", "-"]), e, self._make([m], 1))
        return e

    def _make(self, leaves, depth):
        r = self.rnd
        if depth == 0 or r.random() < 0.25:
            if r.random() < 0.85 or not leaves:
                return ("leaf", r.choice(leaves)) if leaves else ("leaf", r.choice(CONSTS))
            return ("leaf", r.choice(CONSTS))
        k = r.random()
        if k < 0.4:
            return ("bin", r.choice(["+", "-", "*", "*"]), self._make(leaves, depth - 1),
                    self._make(leaves, depth - 1))
        if k < 0.45:
            return ("bin", "/", self._make(leaves, depth - 1),
                    ("un", "(1.5 + {0} * {0})", self._make(leaves, depth - 1)))
        if self.helper and k < 0.55:
            return ("call", "hfun", self._make(leaves, depth - 1), self._make(leaves, depth - 1))
        if r.random() < self.p_kink:
            if r.random() < 0.5:
                return ("un", r.choice(KINKS), self._make(leaves, depth - 1))
            return ("un2", r.choice(KINKS2), self._make(leaves, depth - 1),
                    self._make(leaves, depth - 1))
        return ("un", r.choice(SMOOTH), self._make(leaves, depth - 1))


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------

@dataclass
class ParParam:
    name: str
    kind: str           # "arr", "iarr", "float", "int"
    ann: str            # "dup", "const", "active"
    value: object = None
    shadow: object = None
    layout: str = "C"
    dtype: str = "f64"


@dataclass
class Block:
    """One template instance: `lines` with {E0}, {E1}, ... placeholders for `exprs`."""
    name: str
    lines: List[str]
    exprs: List[tuple]
    in_time: bool = False
    reduces: bool = False
    arrays: frozenset = frozenset()    # the parameters and temporaries it uses


@dataclass
class ParKernel:
    """A generated parallel kernel: helper + `kern` sources, parameters with values."""
    seed: int
    params: List[ParParam]
    blocks: List[Block]
    helper: Optional[tuple] = None     # the helper's expression over (p, q)
    temps: List[str] = field(default_factory=list)   # "tmp": np.zeros(n) before the loops
    ret_seed: float = 1.0
    forms = None                       # (the default profile's call forms: none here)

    @property
    def returns(self) -> bool:
        return any(b.reduces for b in self.blocks)

    def uses_f32(self) -> bool:
        return False

    def used_params(self) -> List[ParParam]:
        used = set()
        for b in self.blocks:
            used |= b.arrays
        if self.temps:
            used.add("x")
        return [p for p in self.params if p.name in used]


# sizes: n = x.shape[0] (1-D arrays x, u, y; every kernel has x), r = X.shape[0] (X, Y:
# (r, n); h: (r,)), p = idx.shape[0] (g: (p,))


def render(k: ParKernel) -> str:
    """The module source: imports, the helper, and `kern`."""
    lines = ["import math", "import numba", "import numpy as np", "from numba import njit, prange",
             ""]
    if k.helper is not None:
        lines += ["", "@njit", "def hfun(p, q):", f"    return {render_expr(k.helper)}", ""]
    params = k.used_params()
    lines += ["", "@njit(parallel=True)", f"def kern({', '.join(p.name for p in params)}):"]
    names = {p.name for p in params}
    body = ["n = x.shape[0]"]
    if "X" in names:
        body.append("r = X.shape[0]")
    if "idx" in names:
        body.append("p = idx.shape[0]")
    for t in k.temps:
        body.append(f"{t} = np.zeros(n)")
    if k.returns:
        body.append("s = 0.0")
    in_time = False
    for b in k.blocks:
        if b.in_time and not in_time:
            body.append("for t in range(steps):")
        in_time = b.in_time
        ind = "    " if b.in_time else ""
        filled = {f"E{m}": render_expr(e) for m, e in enumerate(b.exprs)}
        for ln in b.lines:
            body.append(ind + ln.format(**filled))
    if k.returns:
        body.append("return s")
    if not body:
        body.append("pass")
    lines += ["    " + ln for ln in body]
    return "\n".join(lines) + "\n"


def _uses_steps(k: ParKernel) -> bool:
    return any(b.in_time for b in k.blocks)


class _Gen:
    def __init__(self, seed: int):
        self.seed = seed
        self.rnd = random.Random(seed)
        self.np = np.random.default_rng(seed)
        self.ex = Exprs(self.rnd, helper=self.rnd.random() < 0.3,
                         p_kink=0.1 if self.rnd.random() < 0.3 else 0.0)

    # leaves helpers
    def scal(self):
        return ["a", "b"]

    def block(self, name, lines, exprs, arrays, **kw):
        arrays = set(arrays)
        for e in exprs:
            text = render_expr(e)
            for s in ("a", "b"):
                if any(leaf[1] == s for leaf in expr_leaves(e)):
                    arrays.add(s)
            if "idx" in text:
                arrays.add("idx")
        return Block(name, lines, exprs, arrays=frozenset(arrays), **kw)

    def e(self, leaves, depth=3, must=None):
        return self.ex.make(leaves + self.scal(), depth, must)

    # templates (each returns a list of Blocks); `written` says which arrays later loops update
    def t_map(self, time):
        r = self.rnd
        inplace = time or r.random() < 0.4
        T = r.choice(["x", "u"]) if inplace else "y"
        others = [s for s in ("x", "u") if s != T]
        S = r.choice(others)
        leaves = [f"{S}[i]", f"{S}[i - 1]", f"{S}[(i + 1) % n]", f"{T}[i]"]
        if inplace:
            line = f"    {T}[i] = {T}[i] + 0.3 * math.tanh({{E0}})"
        else:
            line = f"    {T}[i] = {{E0}}"
        return [self.block("map", ["for i in prange(n):", line],
                           [self.e(leaves, must=[f"{S}[i]"])], {T, S, "x"}, in_time=time)]

    def t_stencil(self, time):
        r = self.rnd
        S = r.choice(["x", "u"])
        T = "y" if not time else ("u" if S == "x" else "x")
        if r.random() < 0.5:
            head, leaves = "for i in prange(1, n - 1):", [f"{S}[i - 1]", f"{S}[i]", f"{S}[i + 1]"]
        else:
            head, leaves = "for i in prange(n):", [f"{S}[i - 1]", f"{S}[i]", f"{S}[(i + 1) % n]"]
        line = (f"    {T}[i] = 0.5 * {T}[i] + 0.3 * math.tanh({{E0}})" if time
                else f"    {T}[i] = {{E0}}")
        return [self.block("stencil", [head, line], [self.e(leaves, must=leaves[:1] + leaves[2:])],
                           {T, S, "x"}, in_time=time)]

    def t_heat(self, time):
        S = self.rnd.choice(["x", "u"])
        lines = ["for i in prange(1, n - 1):",
                 f"    tmp[i] = {S}[i] + 0.2 * math.tanh({{E0}}) * ({S}[i - 1] - 2.0 * {S}[i] + "
                 f"{S}[i + 1])",
                 "for i in prange(1, n - 1):",
                 f"    {S}[i] = tmp[i]"]
        return [self.block("heat", lines, [self.e([f"{S}[i]"], depth=2)], {S, "x"},
                           in_time=time)]

    def t_gather(self, time):
        S = self.rnd.choice(["x", "u", "y"])
        leaves = [f"{S}[idx[e, 0]]", f"{S}[idx[e, 1]]", "g[e]"]
        return [self.block("gather", ["for e in prange(p):", "    g[e] = {E0}"],
                           [self.e(leaves[:2], must=leaves[:2])], {"g", S, "idx", "x"})]

    def t_reduce(self, time):
        r = self.rnd
        k = r.random()
        if k < 0.4:
            S = r.choice(["x", "u", "y"])
            lines = ["for i in prange(n):", "    s += {E0}"]
            leaves = [f"{S}[i]", f"{S}[(i + 1) % n]"]
            arrays = {S, "x"}
        elif k < 0.7:
            S = r.choice(["x", "u"])
            lines = ["for e in prange(p):", "    s += {E0}"]
            leaves = [f"{S}[idx[e, 0]]", f"{S}[idx[e, 1]]"]
            arrays = {S, "idx", "x"}
        else:
            lines = ["for i in prange(r):", "    acc = 0.0", "    for j in range(n):",
                     "        acc += {E0}", "    s += {E1}"]
            exprs = [self.e(["X[i, j]", "x[j]"], must=["X[i, j]"]), self.e(["acc"], 2, ["acc"])]
            return [self.block("reduce", lines, exprs, {"X", "x"}, reduces=True)]
        return [self.block("reduce", lines, [self.e(leaves, must=leaves[:1])], arrays,
                           reduces=True)]

    def t_reduce_other(self, time):
        """A product or max reduction: refused by enzyme_py (docs/parallel.md), which the
        campaign must see as a clear UnsupportedError, never a wrong gradient."""
        S = self.rnd.choice(["x", "u"])
        if self.rnd.random() < 0.5:
            lines = ["q = 1.0", "for i in prange(n):", "    q *= 1.0 + 0.2 * math.tanh({E0})",
                     "s += q"]
        else:
            lines = ["q = -1e300", "for i in prange(n):", "    q = max(q, {E0})", "s += q"]
        return [self.block("reduce_other", lines, [self.e([f"{S}[i]"], 2, [f"{S}[i]"])],
                           {S, "x"}, reduces=True)]

    def t_pairwise(self, time):
        S = self.rnd.choice(["x", "u"])
        T = "y"
        lines = ["for i in prange(n):", "    acc = 0.0", "    for j in range(n):",
                 "        acc += {E0}", f"    {T}[i] = {{E1}}"]
        exprs = [self.e([f"{S}[i]", f"{S}[j]"], must=[f"{S}[i]", f"{S}[j]"]),
                 self.e(["acc", f"{S}[i]"], 2, ["acc"])]
        return [self.block("pairwise", lines, exprs, {S, T, "x"})]

    def t_rows(self, time):
        v = self.rnd.choice(["x", "u"])
        lines = ["for i in prange(r):", "    for j in range(n):",
                 "        X[i, j] = X[i, j] + 0.3 * math.tanh({E0})"]
        return [self.block("rows", lines,
                           [self.e(["X[i, j]", "X[i, j - 1]", f"{v}[j]"], must=["X[i, j]"])],
                           {"X", v, "x"}, in_time=time)]

    def t_matvec(self, time):
        v = self.rnd.choice(["x", "u"])
        lines = ["for i in prange(r):", "    acc = 0.0", "    for j in range(n):",
                 "        acc += X[i, j] * {E0}", "    h[i] = {E1}"]
        exprs = [self.e([f"{v}[j]"], 2, [f"{v}[j]"]), self.e(["acc"], 2, ["acc"])]
        return [self.block("matvec", lines, exprs, {"X", "h", v, "x"})]

    def t_stencil2d(self, time):
        leaves = ["X[i - 1, j]", "X[i + 1, j]", "X[i, j - 1]", "X[i, j + 1]", "X[i, j]"]
        lines = ["for i in prange(1, r - 1):", "    for j in range(1, n - 1):",
                 "        Y[i, j] = {E0}"]
        return [self.block("stencil2d", lines, [self.e(leaves, must=leaves[:2])],
                           {"X", "Y", "x"})]

    def t_temp(self, time):
        S = self.rnd.choice(["x", "u"])
        T = "y"
        alloc = self.rnd.choice(["np.empty(3)", "np.zeros(3)"])
        if self.rnd.random() < 0.5:
            lines = ["for i in prange(n):", f"    buf = {alloc}", "    buf[0] = {E0}",
                     "    buf[1] = {E1}", "    buf[2] = {E2}", f"    {T}[i] = {{E3}}"]
            leaves = [f"{S}[i]", f"{S}[i - 1]"]
            exprs = [self.e(leaves, 2, leaves[:1]), self.e(leaves, 2, leaves[:1]),
                     self.e(leaves, 2), self.e(["buf[0]", "buf[1]", "buf[2]"], 2, ["buf[0]",
                                                                                    "buf[1]"])]
        else:
            lines = ["for i in prange(n):", f"    buf = {alloc}", "    for k in range(3):",
                     "        buf[k] = {E0}", "    acc = 0.0", "    for k in range(3):",
                     "        acc += buf[k] * buf[k]", f"    {T}[i] = {{E1}}"]
            exprs = [self.e([f"{S}[i]", f"{S}[(i + k) % n]"], 2, [f"{S}[(i + k) % n]"]),
                     self.e(["acc", f"{S}[i]"], 2, ["acc"])]
        return [self.block("temp", lines, exprs, {S, T, "x"})]

    def t_scratch(self, time):
        """Per-thread scratch rows chosen with the thread id (docs/parallel.md)."""
        S = self.rnd.choice(["x", "u"])
        head = ["scr = np.empty((numba.get_num_threads(), 3))", "for i in prange(n):",
                "    tid = numba.get_thread_id()"]
        fill = [f"{S}[i]", f"{S}[(i + k) % n]"]
        if self.rnd.random() < 0.5:
            lines = head + ["    for k in range(3):", "        scr[tid, k] = {E0}",
                            "    acc = 0.0", "    for k in range(3):",
                            "        acc += scr[tid, k] * scr[tid, k]", "    y[i] = {E1}"]
        else:
            lines = head + ["    for k in range(scr.shape[1]):", "        scr[tid, k] = 0.0",
                            "    for k in range(3):", "        scr[tid, (i + 2 * k) % 3] += {E0}",
                            "    acc = scr[tid, i % 3]", "    y[i] = {E1}"]
        exprs = [self.e(fill, 2, fill[1:]), self.e(["acc", "scr[tid, 0]", f"{S}[i]"], 2, ["acc"])]
        return [self.block("scratch", lines, exprs, {S, "y", "x"})]

    def t_columns(self, time):
        """Column 0 of each row from columns 1.. of other rows: race-free, but not provably
        (the array is written and read at other iterations' rows: atomic updates)."""
        leaves = ["X[i, 0]", "X[(i + 1) % r, 1]", "X[r - 1 - i, 2]", "X[i, 1]"]
        lines = ["for i in prange(r):", "    X[i, 0] = X[i, 0] + 0.3 * math.tanh({E0})"]
        return [self.block("columns", lines, [self.e(leaves, must=leaves[1:3])], {"X", "x"},
                           in_time=time)]

    def t_arrexpr(self, time):
        if self.rnd.random() < 0.35:        # 2-D: a parfor over two dimensions
            f = self.rnd.choice(["np.sin", "np.tanh", "np.cos"])
            e = f"{f}(X) * X + a * X"
            if self.rnd.random() < 0.5:
                return [self.block("arrexpr", [f"s += np.sum({e})"], [], {"X", "a", "x"},
                                   reduces=True)]
            return [self.block("arrexpr", [f"Y[:] = {e}"], [], {"X", "Y", "a", "x"})]
        S, S2 = self.rnd.choice([("x", "u"), ("u", "x"), ("x", "x")])
        f = self.rnd.choice(["np.sin", "np.tanh", "np.cos"])
        e = f"{f}({S}) * {S2} + a * {S} * {S}"
        if self.rnd.random() < 0.5:
            return [self.block("arrexpr", [f"s += np.sum({e})"], [], {S, S2, "a", "x"},
                               reduces=True)]
        return [self.block("arrexpr", [f"y[:] = {e}"], [], {S, S2, "a", "y", "x"})]

    TEMPLATES = {"map": 3, "stencil": 2, "heat": 1, "gather": 2, "reduce": 3, "pairwise": 1,
                 "rows": 1.5, "matvec": 1, "stencil2d": 1, "temp": 1.5, "arrexpr": 1,
                 "columns": 1, "reduce_other": 0.3, "scratch": 1}
    TIMED = ("map", "stencil", "heat", "rows", "columns")

    def generate(self) -> ParKernel:
        r = self.rnd
        n, rows, p = r.randint(5, 11), r.randint(3, 6), r.randint(4, 12)
        names, weights = zip(*self.TEMPLATES.items())
        blocks: List[Block] = []
        for _ in range(r.randint(1, 3)):
            name = r.choices(names, weights)[0]
            if name in self.TIMED and r.random() < 0.35:
                time_blocks = getattr(self, f"t_{name}")(True)
                if r.random() < 0.4:
                    other = r.choice([t for t in self.TIMED if t != name])
                    time_blocks += getattr(self, f"t_{other}")(True)
                blocks += time_blocks
            else:
                blocks += getattr(self, f"t_{name}")(False)
        helper = self.ex.make(["p", "q"], 2, ["p"]) if self.ex.helper else None
        if helper is not None:      # the helper must not call itself (seed 17000115)
            helper = _no_calls(helper)
        if helper is not None and not any("hfun" in render_expr(e) for b in blocks
                                          for e in b.exprs):
            helper = None
        rng = self.np

        def arr(shape):
            return rng.uniform(-1.2, 1.2, shape)
        params = [
            ParParam("x", "arr", "dup", arr(n), rng.standard_normal(n),
                     layout=r.choice("CCCS")),
            ParParam("u", "arr", "dup", arr(n), rng.standard_normal(n),
                     layout=r.choice("CCCS")),
            ParParam("y", "arr", "dup", arr(n), rng.standard_normal(n)),
            ParParam("X", "arr", "dup", arr((rows, n)), rng.standard_normal((rows, n)),
                     layout=r.choice("CCF")),
            ParParam("Y", "arr", "dup", arr((rows, n)), rng.standard_normal((rows, n))),
            ParParam("h", "arr", "dup", arr(rows), rng.standard_normal(rows)),
            ParParam("g", "arr", "dup", arr(p), rng.standard_normal(p)),
            ParParam("idx", "iarr", "const", rng.integers(0, n, (p, 2))),
            ParParam("a", "float", "active", float(rng.uniform(0.2, 1.2))),
            ParParam("b", "float", "active", float(rng.uniform(-1.0, 1.0))),
            ParParam("steps", "int", "const", r.randint(2, 4)),
        ]
        k = ParKernel(self.seed, params, blocks, helper,
                      temps=["tmp"] if any(b.name == "heat" for b in blocks) else [],
                      ret_seed=float(np.round(rng.uniform(0.5, 1.5), 3)))
        _fix_steps(k)
        return k


def _no_calls(e):
    """`e` with every helper call replaced by the product of its arguments."""
    if e[0] == "leaf":
        return e
    if e[0] == "call":
        return ("bin", "*", _no_calls(e[2]), _no_calls(e[3]))
    return e[:2] + tuple(_no_calls(c) for c in e[2:])


def _fix_steps(k: ParKernel):
    """`steps` is a parameter exactly when a block sits in a time loop."""
    if _uses_steps(k):
        for b in k.blocks:
            if b.in_time and "steps" not in b.arrays:
                b.arrays = b.arrays | {"steps"}


def generate_parallel(seed: int) -> ParKernel:
    return _Gen(seed).generate()


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------

def make_args(k: ParKernel):
    """Fresh annotated arguments of the used parameters."""

    out = []
    for p in k.used_params():
        if p.kind == "arr":
            out.append(Duplicated(layout_array(np.array(p.value), p.layout),
                                  layout_array(np.array(p.shadow), p.layout)))
        elif p.kind == "iarr":
            out.append(Const(np.array(p.value)))
        elif p.kind == "float":
            out.append(Active(float(p.value)))
        else:
            out.append(Const(int(p.value)))
    return out


def _copy_args(args):

    out = []
    for a in args:
        if isinstance(a, Duplicated):
            lay = "F" if a.value.ndim == 2 and a.value.flags.f_contiguous and \
                not a.value.flags.c_contiguous else ("C" if a.value.flags.c_contiguous else "S")
            out.append(Duplicated(layout_array(a.value.copy(), lay),
                                  layout_array(a.shadow.copy(), lay)))
        elif isinstance(a, Active):
            out.append(Active(a.value))
        else:
            out.append(Const(np.copy(a.value) if isinstance(a.value, np.ndarray) else a.value))
    return out


_counter = [0]


def load(k: ParKernel) -> dict:
    src = render(k)
    _counter[0] += 1
    ns = run_source(src, f"<tools.fuzz parallel seed={k.seed} #{_counter[0]}>",
                    f"tools_fuzz_par_{_counter[0]}")
    ns["__source__"] = src
    return ns


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------

class _threads:
    """`with _threads(k):` runs with k Numba threads (at most NUMBA_NUM_THREADS)."""

    def __init__(self, k):
        self.k = k

    def __enter__(self):
        self.before = numba.get_num_threads()
        numba.set_num_threads(min(self.k, numba.config.NUMBA_NUM_THREADS))

    def __exit__(self, *exc):
        numba.set_num_threads(self.before)


def thread_counts():
    return sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)})


def serial_copy(kern):
    """The serial kernel the parallel one is compared with: `njit(kern.py_func)`."""
    return njit(kern.py_func)


def _gradient(kern, k, args, **kw):
    """autodiff on copies: ([shadow or Active result per argument], [primal values])."""
    a = _copy_args(args)
    res = autodiff(kern, *a, seed=k.ret_seed if k.returns else None, **kw)
    grads = []
    for m, x in enumerate(a):
        if isinstance(x, Duplicated):
            grads.append(np.array(x.shadow, np.float64))
        elif isinstance(x, Active):
            grads.append(np.float64(res[m]))
        else:
            grads.append(None)
    return grads, [np.array(x.value) if isinstance(x.value, np.ndarray) else None for x in a]


def _close(got, want, rtol) -> bool:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 0.0)
    return bool(np.all(np.abs(got - want) <= rtol * scale))


def _compare(label, got, want, rtol):
    lines = []
    for m, (g, w) in enumerate(zip(got, want)):
        if g is None or w is None:
            continue
        if not _close(g, w, rtol):
            lines.append(f"{label}: argument {m}: parallel {np.asarray(g)!r}, serial "
                         f"{np.asarray(w)!r}")
    return lines


def check_parallel(k: ParKernel, st) -> "Outcome":    # noqa: F821 - checker.Outcome


    rtol, eps = st.rtol64, st.eps64
    try:
        ns = load(k)
    except Exception as exc:       # noqa: BLE001 - the generator printed bad Python
        return Outcome(INVALID, f"source:{type(exc).__name__}", short(exc))
    kern = ns["kern"]
    args = make_args(k)
    nthreads = thread_counts()

    # 1. the serial kernel (the plain parallel one is never called: its compile would be the
    # most expensive step, and step 3 compares the parallel gradient's primal results with
    # the serial kernel's): finite, moderate values
    serial = serial_copy(kern)
    try:
        with np.errstate(all="ignore"):
            plain = _copy_args(args)
            ret = serial(*[a.value for a in plain])
    except NumbaError as exc:
        return Outcome(INVALID, f"numba:{type(exc).__name__}", short(exc))
    except Exception as exc:       # noqa: BLE001
        return Outcome(INVALID, f"plain:{type(exc).__name__}", tb(exc))
    vals = [np.asarray(a.value, np.float64) for a in plain if isinstance(a.value, np.ndarray)
            and a.value.dtype.kind == "f"]
    if ret is not None:
        vals.append(np.asarray([ret], np.float64))
    if not all(np.all(np.isfinite(v)) for v in vals):
        return Outcome(DISCARD, "nonfinite")
    if max(float(np.max(np.abs(v))) for v in vals if v.size) > st.big64:
        return Outcome(DISCARD, "overflow")

    # 2. finite differences at h and 2h must agree
    seed = k.ret_seed if k.returns else None
    try:
        with np.errstate(all="ignore"):
            fd1 = finite_difference(serial, *_copy_args(args), seed=seed, eps=eps)
            fd2 = finite_difference(serial, *_copy_args(args), seed=seed, eps=2 * eps)
    except Exception as exc:       # noqa: BLE001
        return Outcome(INVALID, f"fd:{type(exc).__name__}", tb(exc))
    noisy = fd_discard(fd1, fd2, rtol, st.consistency)
    if noisy is not None:
        return noisy

    # 3. the parallel gradient builds; the serial one matches finite differences; the parallel
    # one with 1 and 2 threads matches the serial one (rtol 1e-9), primal arrays included
    try:
        compile_gradient(kern, *_copy_args(args))
    except UnsupportedError as exc:
        return unsupported(exc)
    except Exception as exc:       # noqa: BLE001
        return Outcome(FAIL, f"crash:{type(exc).__name__}", tb(exc))
    try:
        with np.errstate(all="ignore"):
            rep = check_gradient(serial, *_copy_args(args), seed=seed, rtol=rtol, eps=eps)
    except UnsupportedError as exc:
        return unsupported(exc, "serial: ")
    except Exception as exc:       # noqa: BLE001
        return Outcome(FAIL, f"crash:{type(exc).__name__}[serial]", tb(exc))
    if not rep.passed:
        return Outcome(FAIL, gradient_failure(rep) + "[serial]", str(rep))
    try:
        with np.errstate(all="ignore"):
            want, _ = _gradient(serial, k, args)
            want_primal = [np.array(a.value) if isinstance(a.value, np.ndarray) else None
                           for a in plain]
            for nt in nthreads:
                with _threads(nt):
                    got, got_primal = _gradient(kern, k, args)
                lines = _compare(f"threads={nt}", got, want, 1e-9)
                lines += _compare(f"threads={nt} primal", got_primal, want_primal, 1e-12)
                if lines:
                    return Outcome(FAIL, f"serial_mismatch[threads={nt}]", "\n".join(lines))
    except Exception as exc:       # noqa: BLE001
        return Outcome(FAIL, f"crash:{type(exc).__name__}", tb(exc))

    # 4. forward mode, 1 and 2 threads, against reverse mode
    fwd = ""
    for nt in nthreads:
        with _threads(nt):
            fwd, problem = forward_check(kern, k, args, rep, rtol)
        if problem:
            return Outcome(FAIL, f"forward_mismatch[threads={nt}]", problem, forward=fwd)
        if fwd != "checked":
            break

    # 5. deterministic=True: the same bits twice, the serial values
    if selected(k.seed, 2246822519, 0.1):
        det = _deterministic_check(kern, k, args, want, nthreads[-1])
        if det and det[0] == FAIL:
            return Outcome(FAIL, det[1], det[2], forward=fwd)
        if det:
            fwd = (fwd + "; " if fwd else "") + det[1]
    return Outcome(PASS, "", forward=fwd)


def _deterministic_check(kern, k, args, want, nt):
    try:
        with np.errstate(all="ignore"), _threads(nt):
            g1, _ = _gradient(kern, k, args, deterministic=True)
            g2, _ = _gradient(kern, k, args, deterministic=True)
    except UnsupportedError:
        return ("note", "deterministic:refused", "")
    except Exception as exc:       # noqa: BLE001
        return ("fail", "crash:deterministic", tb(exc))
    for a, b in zip(g1, g2):
        if a is not None and np.asarray(a).tobytes() != np.asarray(b).tobytes():
            return ("fail", "nondeterministic", f"two runs differ: {a!r} {b!r}")
    lines = _compare("deterministic", g1, want, 1e-9)
    if lines:
        return ("fail", "serial_mismatch[deterministic]", "\n".join(lines))
    return ("note", "deterministic:checked", "")


def forward_check(kern, k: ParKernel, args, rep, rtol):
    """<v, J u> from forward mode against <J^T v, u> from the reverse report `rep`; returns
    ("checked" | "unsupported:..." | "skipped:...", problem or "")."""

    rng = np.random.default_rng(k.seed ^ 0x5EED)
    fwd_args, rev, rev_abs, v_dot = [], 0.0, 0.0, []
    ad = iter(rep.args)
    for m, a in enumerate(_copy_args(args)):
        if isinstance(a, Duplicated):
            u = rng.standard_normal(a.value.shape)
            g = np.asarray(next(ad).ad, np.float64)
            rev += float(np.sum(g * u))
            rev_abs += float(np.sum(np.abs(g * u)))
            v_dot.append((m, np.asarray(a.shadow, np.float64)))
            lay = "C" if a.value.flags.c_contiguous else ("F" if a.value.flags.f_contiguous
                                                          else "S")
            fwd_args.append(Duplicated(a.value, layout_array(u, lay)))
        elif isinstance(a, Active):
            u = float(rng.standard_normal())
            g = float(next(ad).ad)
            rev += g * u
            rev_abs += abs(g * u)
            fwd_args.append(Active(a.value, u))
        else:
            fwd_args.append(a)
    try:
        with np.errstate(all="ignore"):
            result = autodiff(kern, *fwd_args, mode=Forward)
    except UnsupportedError as exc:
        return f"unsupported:{normalize_construct(getattr(exc, 'construct', str(exc)))}", ""
    except Exception as exc:       # noqa: BLE001
        return "checked", f"forward mode raised {tb(exc)}"
    fwd = k.ret_seed * float(result) if k.returns else 0.0
    fwd_abs = abs(fwd)
    for m, v in v_dot:
        terms = v * np.asarray(fwd_args[m].shadow, np.float64)
        fwd += float(np.sum(terms))
        fwd_abs += float(np.sum(np.abs(terms)))
    if not abs(fwd - rev) <= 10 * rtol * max(1.0, rev_abs, fwd_abs):
        return "checked", f"<v, J u> forward = {fwd!r}, <J^T v, u> reverse = {rev!r}"
    return "checked", ""


# ---------------------------------------------------------------------------------------------
# Shrinking and reproducers
# ---------------------------------------------------------------------------------------------

def count_nodes(k: ParKernel) -> int:
    return sum(len(expr_leaves(e)) * 2 for b in k.blocks for e in b.exprs) + len(k.blocks)


def _sub_exprs(e, path=()):
    yield path, e
    if e[0] != "leaf":
        start = 2
        for m, c in enumerate(e[start:]):
            yield from _sub_exprs(c, path + (start + m,))


def _replace(e, path, new):
    if not path:
        return new
    lst = list(e)
    lst[path[0]] = _replace(e[path[0]], path[1:], new)
    return tuple(lst)


def candidates(k: ParKernel):
    """Smaller kernels: a block dropped, a block out of its time loop, a subexpression replaced
    by one of its operands or by a leaf."""
    for m in range(len(k.blocks)):
        c = copy.deepcopy(k)
        del c.blocks[m]
        if c.blocks:
            yield c
    for m, b in enumerate(k.blocks):
        if b.in_time:
            c = copy.deepcopy(k)
            c.blocks[m].in_time = False
            yield c
    for m, b in enumerate(k.blocks):
        for q, e in enumerate(b.exprs):
            for path, sub in _sub_exprs(e):
                if sub[0] == "leaf":
                    continue
                for child in sub[2:]:
                    c = copy.deepcopy(k)
                    c.blocks[m].exprs[q] = _replace(e, path, child)
                    yield c
    if k.helper is not None:
        for path, sub in _sub_exprs(k.helper):
            if sub[0] != "leaf":
                for child in sub[2:]:
                    c = copy.deepcopy(k)
                    c.helper = _replace(k.helper, path, child)
                    yield c


def _valid(k: ParKernel) -> bool:
    src = render(k)
    if "hfun(" in src.split("def kern", 1)[1] and k.helper is None:
        return False
    if k.helper is not None and "hfun(" not in src.split("def kern", 1)[1]:
        k.helper = None
    return True


def shrink(k: ParKernel, still_fails, max_checks: int = 300, log=print) -> ParKernel:
    checks = 0
    progress = True
    while progress and checks < max_checks:
        progress = False
        for c in candidates(k):
            if not _valid(c):
                continue
            checks += 1
            if still_fails(c):
                log(f"  shrunk to {count_nodes(c)} nodes")
                k, progress = c, True
                break
            if checks >= max_checks:
                break
    return k


def _literal(a) -> str:
    return "np." + repr(np.asarray(a)).replace("\n", "\n        ")


def regression_test(k: ParKernel, outcome, reason: str = "", name: str = "",
                    command: str = "") -> str:
    """A pytest file checking the kernel at 1 and 2 threads against finite differences and the
    serial gradient."""
    src = render(k)
    lines = []
    for p in k.used_params():
        if p.kind == "arr":
            v = f"{_literal(p.value)}"
            lines.append(f"    {p.name} = {v}")
        elif p.kind == "iarr":
            lines.append(f"    {p.name} = {_literal(p.value)}")
    arg_exprs = []
    for p in k.used_params():
        if p.kind == "arr":
            arg_exprs.append(f"Duplicated({p.name}.copy(), {_literal(p.shadow)})")
        elif p.kind == "iarr":
            arg_exprs.append(f"Const({p.name})")
        elif p.kind == "float":
            arg_exprs.append(f"Active({p.value!r})")
        else:
            arg_exprs.append(f"Const({p.value!r})")
    seed = repr(k.ret_seed) if k.returns else "None"
    return f'''"""tools.fuzz parallel profile, seed {k.seed}: {outcome.category}.

{reason or "(reason to be written)"}
Found by: {command}
"""
import numba
import numpy as np
import pytest
from numba import njit

from enzyme_py import Active, Const, Duplicated, autodiff, check_gradient

{src}

def _args():
{chr(10).join(lines) if lines else "    pass"}
    return [{", ".join(arg_exprs)}]


@pytest.mark.parametrize("nthreads", [1, 2])
def test_fuzz_parallel_{name or k.seed}(nthreads):
    before = numba.get_num_threads()
    numba.set_num_threads(min(nthreads, numba.config.NUMBA_NUM_THREADS))
    try:
        report = check_gradient(kern, *_args(), seed={seed})
        assert report.passed, str(report)
        got, want = _args(), _args()
        r1 = autodiff(kern, *got, seed={seed})
        r2 = autodiff(njit(kern.py_func), *want, seed={seed})
        for g, w in zip(r1, r2):
            if g is not None:
                assert g == pytest.approx(w, rel=1e-9, abs=1e-9)
        for g, w in zip(got, want):
            if isinstance(g, Duplicated):
                np.testing.assert_allclose(g.shadow, w.shadow, rtol=1e-9, atol=1e-9)
    finally:
        numba.set_num_threads(before)
'''
