"""Seeded generator of random, valid kernels (`Program`s).

`generate(seed)` is reproducible: the same seed always gives the same program and arguments
(Python's `random.Random` for the structure, NumPy's `default_rng` for the values).

What it draws from (see docs in `tools/fuzz/__init__.py`): float arithmetic and every
function of the derivative rule table with arguments mapped into their domains, scalar locals,
1-D and 2-D array parameters (C, F and strided layouts) read and written (in-place updates,
reads after writes, negative and modular indices, gathers and scatters through Const index
arrays), `for` loops (constant, shape, Const int and data-dependent trip counts, ascending,
strided and descending) nested up to depth 3, `while` loops with a bounded counter, if/else on
data, early `break` and `return`, generated `@njit` helpers (scalar, and array-updating),
temporaries (`np.empty`/`np.zeros`), whole-array reductions, float32 and float64 with casts,
and Const / Active / Duplicated annotations.

Differentiable values are never stored into Const arrays (the contract drops derivatives
through Const memory on purpose; that would not be a bug).
"""
from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import numpy as np

from .callers import draw_forms, return_seed
from .complex_data import generate_complex
from .containers import generate_containers
from .exits import generate_exits
from .parallel import generate_parallel
from .program import (LINALG_1D, LINALG_2D, Assign, Bin, Break, Call, CallStmt, Cast, Cmp, DataInt,
                      For, Helper, HCall, If, IfExp, Int, Load, Name, Neg, Num, Param, Program,
                      Raise, Range, Reduce, Return, Shape, Store, Temp, ToFloat, While, validate,
                      walk_stmts)


@dataclass
class Config:
    """Knobs of the generator (the defaults are what campaigns use)."""
    max_stmts: int = 10          # statement budget of the kernel body, all levels together
    min_stmts: int = 2
    max_loop_depth: int = 3
    max_expr_depth: int = 3
    p_f32: float = 0.3           # a kernel uses float32 somewhere
    p_return: float = 0.6        # the kernel returns a float
    p_helpers: float = 0.3
    p_temp: float = 1.0          # weight multiplier of temporaries (0 disables them)
    p_reduce: float = 1.0        # weight multiplier of np.sum / np.max / np.dot (0 disables)
    p_recurrence: float = 1.0    # weight multiplier of in-place time-step recurrences
    p_reread: float = 0.0        # a filled 1-D temporary is read back at once, element by element,
                                 # into a Duplicated array (store forwarding); 0 keeps the seeds
    callers: bool = False        # real callers' forms on top (callers.py: signatures, locals=,
                                 # cache=True, defaults, keywords, array and tuple returns)
    p_linalg: float = 0.0        # weight of NumPy copies and BLAS / LAPACK calls among the
                                 # reductions (program.LINALG_1D, LINALG_2D; docs/linalg.md)
    parallel: bool = False       # @njit(parallel=True) kernels from race-free prange templates
                                 # (parallel.py); the other knobs do not apply
    exits: bool = False          # loops with temporaries and early exits never, sometimes or
                                 # always taken, under the allocators' checks (exits.py)
    memory: str = "tape"         # the gradient's memory= (a small budget checkpoints the loops
                                 # over overwritten memory that qualify, docs/checkpointing.md)
    complex_data: bool = False   # kernels on complex arrays, checked in both modes
                                 # (complex_data.py); the other knobs do not apply
    containers: str = ""         # "lists", "dicts" or "optional": typed containers and Optional
                                 # returns, both modes (containers.py); the other knobs do not apply


# named presets (`python -m tools.fuzz --profile NAME`)
PROFILES = {
    "default": Config(),
    # bigger kernels, more loops over overwritten memory, more helpers and float32
    "stress": Config(max_stmts=18, min_stmts=6, p_helpers=0.6, p_f32=0.4, p_recurrence=3.0),
    # small kernels: faster, for quick runs
    "small": Config(max_stmts=5, min_stmts=1, max_expr_depth=2),
    # temporaries filled by a loop and read back by the next (ir_passes forward-stores)
    "reread": Config(p_temp=3.0, p_reread=0.8),
    # how scientific code declares and calls kernels (callers.py), with more helpers
    "callers": Config(p_helpers=0.6, callers=True),
    # NumPy calls that copy (sort, median, diff of a copy) and matrix products, norms, solve,
    # cholesky, slogdet, eigvalsh, inv on the kernel's arrays (rules/blas.py, rules/lapack.py)
    "linalg": Config(p_reduce=3.0, p_linalg=4.0),
    # prange loops: gathers, reductions, stencils, rows updated in place, time loops (parallel.py)
    "parallel": Config(parallel=True),
    # per-iteration temporaries and early exits (i == stop, data tests; break, raise, return)
    # never, sometimes or always taken, workers under PYTHONMALLOC=debug MALLOC_CHECK_=3 (exits.py)
    "exits": Config(exits=True),
    # the stress profile's kernels under a 1 KB memory budget: their time loops checkpointed
    "checkpoint": Config(max_stmts=18, min_stmts=6, p_helpers=0.6, p_f32=0.4, p_recurrence=3.0,
                         memory="1KB"),
    # complex arrays: holomorphic and non-holomorphic functions, numba_cpow, in-place updates
    # and time loops, against finite differences along both parts and forward mode
    "complex": Config(complex_data=True),
    # numba.typed.List of unequal arrays (arguments, or built from slices in the kernel), read
    # and written in serial and prange loops; typed.Dict of named parameter arrays updated in
    # place; tuples with an Optional(float) leaf given a float seed (containers.py)
    "lists": Config(containers="lists"),
    "dicts": Config(containers="dicts"),
    "optional": Config(containers="optional"),
}


UNARY_ANY = ["sin", "cos", "np.sin", "np.cos", "atan", "asinh", "erf", "erfc", "tanh", "np.tanh",
             "abs", "fabs", "floor", "ceil", "trunc", "rint", "nearbyint", "roundeven", "llvm_round",
             "pyround"]
UNARY_BOUNDED = ["exp", "np.exp", "exp2", "pow2", "exp10", "libm_exp", "expm1", "sinh", "cosh"]
UNARY_POS = ["log", "np.log", "log2", "log10", "log1p", "sqrt", "np.sqrt", "lgamma"]
UNARY_NZ = ["cbrt", "libm_cbrt"]
UNARY_UNIT = ["asin", "acos", "atanh"]
BINARY_DECIDE = ["min", "max", "np.fmin", "np.fmax", "minnum", "maxnum", "copysign"]
CONSTS = [0.5, 1.5, -0.75, 2.0, 0.25, 3.0, -1.25, 0.1, 0.3, -2.5, 1.0, 0.9]

_ROUNDING = {"floor", "ceil", "trunc", "rint", "nearbyint", "roundeven", "llvm_round", "pyround"}


class _Scope:
    def __init__(self, floats, ints, arrays, in_loop=False, depth=0, helpers=(), kernel=True):
        self.floats = list(floats)                     # float names (locals and scalar params)
        self.ints: Dict[str, Tuple] = dict(ints)       # int name -> (lo, hi) or ("param",)
        self.arrays: Dict[str, tuple] = dict(arrays)   # array name -> dims labels
        self.in_loop = in_loop
        self.depth = depth
        self.helpers = list(helpers)
        self.kernel = kernel

    def child(self, in_loop=None, depth=None):
        return _Scope(self.floats, self.ints, self.arrays,
                      self.in_loop if in_loop is None else in_loop,
                      self.depth if depth is None else depth, self.helpers, self.kernel)


class Generator:
    def __init__(self, seed: int, config: Optional[Config] = None):
        self.seed = seed
        self.cfg = config or Config()
        self.r = random.Random(seed)
        self.nr = np.random.default_rng(seed)
        self.counters: Dict[str, int] = {}
        self.pending: list = []      # statements to follow the one just generated

    def fresh(self, prefix):
        k = self.counters.get(prefix, 0)
        self.counters[prefix] = k + 1
        return f"{prefix}{k}"

    def chance(self, p):
        return self.r.random() < p

    def pick(self, weighted):
        """weighted: list of (weight, value)."""
        total = sum(w for w, _ in weighted if w > 0)
        x = self.r.random() * total
        for w, v in weighted:
            if w <= 0:
                continue
            x -= w
            if x <= 0:
                return v
        return [v for w, v in weighted if w > 0][-1]

    # -----------------------------------------------------------------------------------------
    def program(self) -> Program:
        r = self.r
        cfg = self.cfg
        self.f32 = self.chance(cfg.p_f32)
        sizes = {"N": self.pick([(1, 1), (2, 2), (3, 3), (4, 4), (3, 5), (2, 6), (1, 7)]),
                 "R": r.randint(1, 4), "C": r.randint(1, 5)}
        self.sizes = sizes
        params = []
        self.positive = set()
        n_arr = self.pick([(3, 1), (4, 2), (3, 3), (1, 4)])
        for _ in range(n_arr):
            params.append(self.array_param(sizes))
        for _ in range(self.pick([(4, 0), (4, 1), (2, 2)])):
            name = self.fresh("a")
            ann = "active" if self.chance(0.65) else "const"
            dtype = "f32" if (self.f32 and self.chance(0.5)) else "f64"
            v = float(self.nr.uniform(0.2, 1.5)) if self.chance(0.3) else float(self.nr.uniform(-1.5, 1.5))
            if v > 0.2:
                self.positive.add(name)
            params.append(Param(name, "float", ann, dtype, value=round(v, 6)))
        if self.chance(0.3):
            d = self.pick([(3, "N"), (1, "R"), (1, "C")])
            params.append(Param(self.fresh("n"), "int", "const", "i64", dims=(d,),
                                offset=0 if self.chance(0.5) else r.randint(1, 2)))
        if self.chance(0.2):
            s = sizes["N"]
            params.append(Param(self.fresh("p"), "iarr", "const", "i64", dims=("N",),
                                value=self.nr.integers(0, s, s).astype(np.int64)))
        if not any(p.ann in ("dup", "active") for p in params):
            for p in params:
                if p.kind == "arr":
                    p.ann = "dup"
                    p.shadow = self.shadow_for(p)
                    break
        r.shuffle(params)
        self.params = {p.name: p for p in params}
        self.returns = self.chance(cfg.p_return)

        helpers = self.helpers = []
        if self.chance(cfg.p_helpers):
            for _ in range(self.pick([(3, 1), (1, 2)])):
                helpers.append(self.helper(helpers))

        sc = _Scope(floats=[p.name for p in params if p.kind == "float"],
                    ints={p.name: (max(0, sizes[p.dims[0]] - p.offset),) * 2 for p in params if p.kind == "int"},
                    arrays={p.name: p.dims for p in params if p.kind in ("arr", "iarr")},
                    helpers=[h.name for h in helpers])
        self.budget = r.randint(cfg.min_stmts, cfg.max_stmts)
        body = self.block(sc, max(1, self.budget))
        if self.returns:
            body.append(Return(self.ret_expr(sc)))
        elif not any(isinstance(s, (Store, CallStmt, Temp)) for s in _walk(body)):
            body.append(self.store(sc, force_dup=True) or Assign(self.fresh("v"), Num(0.0)))
        prog = Program(self.seed, sizes, params, helpers, body, self.returns,
                       ret_seed=float(round(self.nr.uniform(0.5, 1.5), 4)) if self.chance(0.5) else 1.0)
        validate(prog)
        prog.memory = cfg.memory
        if cfg.callers:       # a stream of its own: the other profiles' programs stay the same
            draw_forms(prog, random.Random(self.seed ^ 0xCA11E25))
            if prog.forms.ret is not None:
                prog.ret_seed = return_seed(prog, np.random.default_rng(self.seed ^ 0xCA11E25))
            validate(prog)
        return prog

    def array_param(self, sizes) -> Param:
        two_d = self.chance(0.35)
        dims = ("R", "C") if two_d else ("N",)
        name = self.fresh("A" if two_d else "x")
        dtype = "f32" if (self.f32 and self.chance(0.7)) else "f64"
        layout = self.pick([(8, "C"), (2 if two_d else 0, "F"), (1, "S")])
        shape = tuple(sizes[d] for d in dims)
        if self.chance(0.3):
            value = self.nr.uniform(0.2, 2.0, shape)
            self.positive.add(name)
        else:
            value = self.nr.uniform(-1.5, 1.5, shape)
        value = np.round(value, 6).astype(np.float32 if dtype == "f32" else np.float64)
        ann = "dup" if self.chance(0.75) else "const"
        p = Param(name, "arr", ann, dtype, dims=dims, layout=layout, value=value)
        if ann == "dup":
            p.shadow = self.shadow_for(p)
        return p

    def shadow_for(self, p):
        s = np.round(self.nr.standard_normal(np.shape(p.value)), 4)
        return s.astype(np.float32 if p.dtype == "f32" else np.float64)

    # -----------------------------------------------------------------------------------------
    # helpers
    def helper(self, earlier) -> Helper:
        name = self.fresh("h")
        saved = self.budget if hasattr(self, "budget") else None
        if self.chance(0.6) or not any(p.kind == "arr" and p.ann == "dup" and len(p.dims) == 1
                                       for p in self.params.values()):
            params = [(self.fresh("b"), "f") for _ in range(self.r.randint(1, 3))]
            sc = _Scope(floats=[n for n, _ in params], ints={}, arrays={},
                        helpers=[h.name for h in earlier if not _is_array_helper(h)], kernel=False)
            self.budget = self.r.randint(0, 3)
            body = self.block(sc, self.budget)
            ret = self.fexpr(sc, 2)
        else:
            arr, idx, val = self.fresh("y"), self.fresh("j"), self.fresh("b")
            params = [(arr, "arr:N"), (idx, "i"), (val, "f")]
            sc = _Scope(floats=[val], ints={idx: ("param",)}, arrays={arr: ("N",)},
                        helpers=[h.name for h in earlier if not _is_array_helper(h)], kernel=False)
            self.budget = self.r.randint(0, 2)
            body = self.block(sc, self.budget)
            op = self.pick([(2, None), (3, "+"), (1, "-")])
            body.append(Store(arr, (Name(idx),), self.fexpr(sc, 2), op))
            ret = Bin("*", Load(arr, (Name(idx),)), Name(val)) if self.chance(0.6) else None
        if saved is not None:
            self.budget = saved
        return Helper(name, params, body, ret)

    # -----------------------------------------------------------------------------------------
    # statements
    def block(self, sc: _Scope, n: int):
        out = []
        sc = sc.child()
        for _ in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            s = self.stmt(sc)
            if s is not None:
                out.append(s)
            out.extend(self.pending)
            self.pending.clear()
        return out

    def stmt(self, sc: _Scope):
        cfg = self.cfg
        deep_ok = sc.depth < cfg.max_loop_depth and self.budget >= 1
        writable = self.writable(sc)
        arr_helpers = [h for h in self.helpers if _is_array_helper(h)] if sc.kernel else []
        kind = self.pick([
            (18, "assign"),
            (10 if sc.floats else 0, "aug"),
            (22 if writable else 0, "store"),
            ((20 if sc.depth == 0 else 10) if deep_ok else 0, "for"),
            (4 if deep_ok else 0, "while"),
            (9, "if"),
            (5 if sc.in_loop else 0, "break"),
            (1.5 if (sc.in_loop and sc.kernel and self.returns) else 0, "return"),
            (5 if arr_helpers and self.dup_1d(sc) else 0, "callstmt"),
            (3 * cfg.p_temp if sc.kernel else 0, "temp"),
            (0.7, "raise"),
            (4 * cfg.p_recurrence
             if (sc.kernel and sc.depth <= cfg.max_loop_depth - 2 and self.recurrence_targets(sc)) else 0,
             "recurrence"),
        ])
        if kind == "assign":
            name = self.fresh("v")
            e = self.fexpr(sc, self.cfg.max_expr_depth)
            sc.floats.append(name)
            return Assign(name, e)
        if kind == "aug":
            # Const scalar parameters stay unassigned (they are the inactive values that may be
            # stored into Const arrays)
            targets = [n for n in sc.floats if not (n in self.params and self.params[n].ann == "const")]
            if not targets:
                name = self.fresh("v")
                e = self.fexpr(sc, self.cfg.max_expr_depth)
                sc.floats.append(name)
                return Assign(name, e)
            name = self.r.choice(targets)
            op = self.pick([(5, "+"), (2, "-"), (2, "*")])
            e = self.factor(sc) if op == "*" else self.fexpr(sc, 2)
            return Assign(name, e, op)
        if kind == "store":
            return self.store(sc)
        if kind == "for":
            return self.for_loop(sc)
        if kind == "while":
            return self.while_loop(sc)
        if kind == "if":
            cond = self.cmp(sc)
            body = self.block(sc, self.r.randint(1, 3))
            orelse = self.block(sc, self.r.randint(1, 2)) if self.chance(0.5) else []
            return If(cond, body, orelse)
        if kind == "break":
            return If(self.cmp(sc), [Break()], [])
        if kind == "return":
            return If(self.cmp(sc), [Return(self.fexpr(sc, 2))], [])
        if kind == "callstmt":
            h = self.r.choice(arr_helpers)
            arr = self.r.choice(self.dup_1d(sc))
            args = (Name(arr), self.index_for(sc, "N"), self.fexpr(sc, 2))
            name = None
            if h.ret is not None and self.chance(0.6):
                name = self.fresh("v")
                sc.floats.append(name)
            return CallStmt(HCall(h.name, args), name)
        if kind == "temp":
            return self.temp(sc)
        if kind == "recurrence":
            return self.recurrence(sc)
        if kind == "raise":
            return Raise(Cmp(">", Call("abs", (self.fexpr(sc, 1),)), Num(1e6)))
        raise AssertionError(kind)

    def writable(self, sc):
        """Arrays a store may target: float params and temporaries in scope."""
        out = []
        for a in sc.arrays:
            p = self.params.get(a)
            if p is not None and p.kind == "iarr":
                continue
            out.append(a)
        return out

    def dup_1d(self, sc):
        out = []
        for a, dims in sc.arrays.items():
            p = self.params.get(a)
            if dims == ("N",) and (p is None or (p.kind == "arr" and p.ann == "dup")):
                out.append(a)
        return out

    def store(self, sc, force_dup=False):
        targets = self.writable(sc)
        if force_dup:
            targets = [a for a in targets if self.params.get(a) is not None and self.params[a].ann == "dup"]
        if not targets:
            return None
        arr = self.r.choice(targets)
        dims = sc.arrays[arr]
        idx = tuple(self.index_for(sc, d) for d in dims)
        p = self.params.get(arr)
        const = p is not None and p.ann == "const"
        op = self.pick([(5, None), (3, "+"), (1, "-"), (1, "*")])
        if const:
            e = self.inactive_expr(sc, 2)
        elif op == "*":
            e = self.factor(sc)
        elif self.chance(0.35):
            # in-place update reading the same element (or a neighbour)
            here = Load(arr, idx) if self.chance(0.6) else Load(arr, tuple(self.index_for(sc, d) for d in dims))
            e = Bin(self.r.choice(["+", "*", "-"]), here, self.fexpr(sc, 2))
            if e.op == "*":
                e = Bin("*", here, self.factor(sc))
        else:
            e = self.fexpr(sc, self.cfg.max_expr_depth)
        return Store(arr, idx, e, op)

    def factor(self, sc):
        """A multiplier near 1 (keeps repeated products bounded)."""
        e = self.fexpr(sc, 2)
        return self.pick([(2, Bin("+", Num(0.9), Bin("*", Num(0.1), Call("tanh", (e,))))),
                          (1, Call("cos", (e,))),
                          (1, Bin("*", Num(0.5), Call("sin", (e,)))),
                          (1, e)])

    def stop_for(self, sc, label):
        """(stop expression, bound label) for a loop over dimension `label` (or a plain count)."""
        if label is None:
            return Int(self.r.randint(1, 4)), None
        s = self.sizes[label]
        opts = [(3, "shape"), (2, "lit"), (2, "data")]
        ip = [n for n, p in self.params.items() if p.kind == "int" and p.dims == (label,)]
        if ip and sc.kernel:
            opts.append((3, "int"))
        sh = [a for a, dims in sc.arrays.items() if label in dims]
        k = self.pick(opts)
        if k == "shape" and sh:
            a = self.r.choice(sh)
            return Shape(a, sc.arrays[a].index(label)), label
        if k == "int":
            return Name(self.r.choice(ip)), label
        if k == "data":
            scale = self.r.choice([1.0, 2.0, 3.0, 5.0])
            return DataInt(self.fexpr(sc, 1), scale, s), label
        return Int(s), label

    def recurrence_targets(self, sc):
        return [a for a in self.writable(sc)
                if not (a in self.params and self.params[a].ann == "const")]

    def recurrence(self, sc):
        """Time steps of an in-place sweep: for t in range(k): for i ...: x[i] = f(x[i], x[i-1],
        x[i+1]) -- every step overwrites what the previous step read (the hard case for a tape)."""
        arr = self.r.choice(self.recurrence_targets(sc))
        dims = sc.arrays[arr]
        outer = self.fresh("i")
        inner_sc = sc.child(in_loop=True, depth=sc.depth + 1)
        inner_sc.ints[outer] = (0, 2)
        loops = []
        body_sc = inner_sc.child(depth=sc.depth + 2)
        idx = []
        for d in dims:
            v = self.fresh("i")
            s = self.sizes[d]
            down = self.chance(0.3)
            loops.append((v, d, down))
            body_sc.ints[v] = (0, s - 1)
            idx.append(Name(v))
        idx = tuple(idx)

        def nb(delta):
            """A neighbour along the last axis: i-1 (wraps to the end) or (i+1) % n."""
            j = list(idx)
            d = dims[-1]
            j[-1] = Bin("-", idx[-1], Int(1)) if delta < 0 else \
                Bin("%", Bin("+", idx[-1], Int(1)), self._size_expr(sc, d))
            return Load(arr, tuple(j))
        here = Load(arr, idx)
        reads = [here, nb(-1), nb(+1)] + [self.fexpr(body_sc, 1)]
        self.r.shuffle(reads)
        e = reads[0]
        for r_ in reads[1:self.r.randint(2, 4)]:
            e = self.pick([(3, lambda: Bin(self.r.choice(["+", "-"]), e, Bin("*", Num(0.5), r_))),
                           (1, lambda: Bin("*", e, self.factor_of(r_))),
                           (1, lambda: Bin("+", e, Call(self.r.choice(["sin", "tanh", "atan"]), (r_,))))])()
        body = [Store(arr, idx, e, self.pick([(4, None), (1, "+")]))]
        for v, d, down in reversed(loops):
            stop = self._size_expr(sc, d)
            rng = Range(Bin("-", stop, Int(1)), Int(-1), -1) if down else Range(None, stop)
            body = [For(v, rng, body)]
        return For(outer, Range(None, Int(self.r.randint(2, 3))), body)

    def factor_of(self, e):
        return Bin("+", Num(0.9), Bin("*", Num(0.1), Call("tanh", (e,))))

    def for_loop(self, sc):
        label = self.pick([(5, "N"), (2, "R"), (2, "C"), (1, None)])
        if label is not None and not any(label in d for d in sc.arrays.values()):
            label = "N" if any("N" in d for d in sc.arrays.values()) else None
        var = self.fresh("i")
        stop, label = self.stop_for(sc, label)
        kind = self.pick([(8, "up"), (1, "from1"), (1, "step2"), (2, "down")]) if label else "up"
        inner = sc.child(in_loop=True, depth=sc.depth + 1)
        if kind == "up":
            rng = Range(None, stop)
            inner.ints[var] = (0, self.sizes[label] - 1) if label else (0, stop.value - 1)
        elif kind == "from1":
            rng = Range(Int(1), stop)
            inner.ints[var] = (1, self.sizes[label] - 1)
        elif kind == "step2":
            rng = Range(Int(0), stop, 2)
            inner.ints[var] = (0, self.sizes[label] - 1)
        else:
            rng = Range(Bin("-", stop, Int(1)), Int(-1), -1)
            inner.ints[var] = (0, self.sizes[label] - 1)
        body = self.block(inner, self.r.randint(1, 3))
        return For(var, rng, body)

    def while_loop(self, sc):
        counter = self.fresh("k")
        label = self.r.choice(["N", "R", "C"])
        bound = self.sizes[label] if self.chance(0.7) else self.r.randint(1, 6)
        cond = self.cmp(sc) if self.chance(0.7) else None
        inner = sc.child(in_loop=True, depth=sc.depth + 1)
        inner.ints[counter] = (0, max(0, bound - 1))
        body = self.block(inner, self.r.randint(1, 3))
        return While(counter, bound, cond, body)

    def temp(self, sc):
        name = self.fresh("t")
        dims = self.pick([(3, ("N",)), (1, ("R", "C"))])
        dtype = "f32" if (self.f32 and self.chance(0.6)) else "f64"
        if self.chance(0.75):
            fv = tuple(self.fresh("q") for _ in dims)
            inner = sc.child()
            for v, d in zip(fv, dims):
                inner.ints[v] = (0, self.sizes[d] - 1)
            fill = self.fexpr(inner, 2)
            t = Temp(name, dims, dtype, "empty", fv, fill)
            if self.cfg.p_reread > 0 and dims == ("N",) and self.chance(self.cfg.p_reread):
                if self.chance(0.5):      # from scalars only: nothing it reads is ever written
                    inner.arrays = {}
                    t.fill = self.fexpr(inner, 2)
                self.pending.append(self.reread(sc, name))
        else:
            t = Temp(name, dims, dtype, "zeros", (), None)
        sc.arrays[name] = dims
        return t

    def reread(self, sc, name):
        """for i in range(<N>): d[i] += t[i] * <factor>, over the fill loop's range, into a
        Duplicated array when there is one (else into t itself)."""
        var = self.fresh("i")
        inner = sc.child(in_loop=True, depth=sc.depth + 1)
        inner.ints[var] = (0, self.sizes["N"] - 1)
        shapes = [(n, p.dims.index("N")) for n, p in self.params.items()
                  if p.kind in ("arr", "iarr") and "N" in p.dims]
        stop = Shape(*shapes[0]) if shapes else Int(self.sizes["N"])
        dups = [a for a in self.dup_1d(sc) if a != name]
        target = self.r.choice(dups) if dups else name
        expr = Bin("*", Load(name, (Name(var),)), self.factor(inner))
        return For(var, Range(None, stop), [Store(target, (Name(var),), expr, "+")])

    def ret_expr(self, sc):
        e = self.fexpr(sc, 2)
        if sc.floats and self.chance(0.7):
            e = Bin("+", Name(self.r.choice(sc.floats)), e)
        return e

    # -----------------------------------------------------------------------------------------
    # indices
    def index_for(self, sc, label):
        """An int expression valid as an index into a dimension with size label `label`."""
        s = self.sizes[label]
        opts = []
        for n, rg in sc.ints.items():
            if rg[0] == "param":
                if label == "N":
                    opts.append((8, Name(n)))
                continue
            lo, hi = rg
            if lo >= -s and hi <= s - 1:
                opts.append((6, Name(n)))
            if lo >= 0 and hi >= lo:
                opts.append((1, Bin("%", Bin("+", Name(n), Int(self.r.randint(1, 3))), self._size_expr(sc, label))))
                c = self.r.randint(1, max(1, s))
                if lo - c >= -s and hi - c <= s - 1:
                    opts.append((1, Bin("-", Name(n), Int(c))))
                if hi <= s - 1:
                    opts.append((0.5, Bin("-", Bin("-", self._size_expr(sc, label), Int(1)), Name(n))))
        for a, dims in sc.arrays.items():
            p = self.params.get(a)
            if p is not None and p.kind == "iarr" and dims == (label,) and len(opts) > 0:
                inner = [Name(n) for n, rg in sc.ints.items()
                         if rg[0] != "param" and rg[0] >= -self.sizes[dims[0]] and rg[1] <= self.sizes[dims[0]] - 1]
                if inner:
                    opts.append((1.5, Load(a, (self.r.choice(inner),))))
        opts.append((2, Int(self.r.randint(0, s - 1))))
        if s >= 1:
            opts.append((0.4, Int(-self.r.randint(1, s))))
        return copy.deepcopy(self.pick(opts))

    def _size_expr(self, sc, label):
        sh = [a for a, dims in sc.arrays.items() if label in dims and a in self.params]
        if sh and self.chance(0.6):
            a = self.r.choice(sh)
            return Shape(a, sc.arrays[a].index(label))
        return Int(self.sizes[label])

    # -----------------------------------------------------------------------------------------
    # expressions
    def num(self):
        return Num(self.r.choice(CONSTS), f32=self.f32 and self.chance(0.3))

    def leaf(self, sc):
        opts = [(2, "num")]
        if sc.floats:
            opts.append((5, "name"))
        readable = [a for a in sc.arrays if not (a in self.params and self.params[a].kind == "iarr")]
        if readable:
            opts.append((6, "load"))
        iv = [n for n, rg in sc.ints.items() if rg[0] != "param"]
        if iv:
            opts.append((1, "int"))
        if readable and sc.kernel:
            opts.append((0.4 * self.cfg.p_reduce, "reduce"))
        k = self.pick(opts)
        if k == "num":
            return self.num()
        if k == "name":
            return Name(self.r.choice(sc.floats))
        if k == "load":
            a = self.r.choice(readable)
            return Load(a, tuple(self.index_for(sc, d) for d in sc.arrays[a]))
        if k == "int":
            return Bin("*", ToFloat(Name(self.r.choice(iv))), Num(self.r.choice([0.25, 0.5, -0.3])))
        fn = self.pick([(4, "sum"), (1, "max"), (1, "min"), (0.5, "dot"), (0.5, "prod"),
                        (self.cfg.p_linalg, "linalg")])
        a = self.r.choice(readable)
        if fn == "linalg":
            fn = self.r.choice(sorted(LINALG_1D if len(sc.arrays[a]) == 1 else LINALG_2D))
        if fn in ("dot",) and len(sc.arrays[a]) != 1:
            fn = "sum"
        return Reduce(fn, a)

    def inactive_expr(self, sc, depth):
        """An expression that carries no derivative: constants, loop indices, Const params."""
        consts = [n for n in sc.floats if n in self.params and self.params[n].ann == "const"]
        carrs = [a for a, d in sc.arrays.items() if a in self.params and self.params[a].ann == "const"
                 and self.params[a].kind == "arr"]
        iv = [n for n, rg in sc.ints.items() if rg[0] != "param"]

        def leaf():
            opts = [(2, lambda: self.num())]
            if consts:
                opts.append((3, lambda: Name(self.r.choice(consts))))
            if carrs:
                def ld():
                    a = self.r.choice(carrs)
                    return Load(a, tuple(self.index_for(sc, d) for d in sc.arrays[a]))
                opts.append((4, ld))
            if iv:
                opts.append((2, lambda: Bin("*", ToFloat(Name(self.r.choice(iv))), Num(0.5))))
            return self.pick(opts)()

        def rec(d):
            if d <= 0 or self.chance(0.3):
                return leaf()
            k = self.pick([(3, "bin"), (2, "fn")])
            if k == "bin":
                return Bin(self.r.choice(["+", "-", "*"]), rec(d - 1), rec(d - 1))
            return Call(self.r.choice(["sin", "cos", "tanh", "atan"]), (rec(d - 1),))
        return rec(depth)

    def fexpr(self, sc, depth):
        if depth <= 0 or self.chance(0.3):
            return self.leaf(sc)
        d = depth - 1
        hs = [h for h in sc.helpers if not _is_array_helper(self._helper(h))]
        k = self.pick([
            (28, "bin"), (20, "unary"), (7, "binfn"), (6, "div"), (4, "ifexp"), (3, "cast"),
            (2, "neg"), (5 if hs else 0, "helper"), (4, "pow"), (2, "mod"), (1.5, "ternary"),
        ])
        if k == "bin":
            return Bin(self.r.choice(["+", "-", "*", "+", "*"]), self.fexpr(sc, d), self.fexpr(sc, d))
        if k == "unary":
            return self.unary(sc, d)
        if k == "binfn":
            fn = self.pick([(6, "decide"), (2, "atan2"), (2, "hypot"), (2, "pow"), (1, "math.pow")])
            if fn == "decide":
                f = self.r.choice(BINARY_DECIDE)
                return Call(f, (self.fexpr(sc, d), self.fexpr(sc, d)))
            if fn == "atan2":
                a, b = self.fexpr(sc, d), self.fexpr(sc, d)
                return Call("atan2", (a, self.pos(b)) if self.chance(0.5) else (self.pos(a), b))
            if fn == "hypot":
                return Call("hypot", (self.fexpr(sc, d), self.fexpr(sc, d)))
            return Call(fn, (self.pos(self.fexpr(sc, d)), self.bounded(self.fexpr(sc, d), small=True)))
        if k == "div":
            a, b = self.fexpr(sc, d), self.fexpr(sc, d)
            den = self.pick([(3, lambda: self.pos(b)), (1, lambda: b),
                             (1, lambda: Bin("+", Num(1.0), Bin("*", b, copy.deepcopy(b))))])()
            return Bin("/", a, den)
        if k == "ifexp":
            return IfExp(self.cmp(sc), self.fexpr(sc, d), self.fexpr(sc, d))
        if k == "cast":
            to = self.pick([(3 if self.f32 else 1, "f32"), (1, "f64"), (1, "float")])
            return Cast(to, self.fexpr(sc, d))
        if k == "neg":
            return Neg(self.fexpr(sc, d))
        if k == "helper":
            h = self._helper(self.r.choice(hs))
            return HCall(h.name, tuple(self.fexpr(sc, d) for _ in h.params))
        if k == "pow":
            a = self.fexpr(sc, d)
            iv = [n for n, rg in sc.ints.items() if rg[0] != "param" and rg[0] >= 0 and rg[1] <= 6]
            kind = self.pick([(3, "lit"), (1, "neglit"), (2 if iv else 0, "var"), (2, "powi")])
            if kind == "lit":
                return Bin("**", a, Int(self.r.choice([2, 3, 4])))
            if kind == "neglit":
                return Bin("**", self.nz(a), Int(self.r.choice([-1, -2])))
            if kind == "var":
                return Bin("**", a, Name(self.r.choice(iv)))
            # literal exponents only: a variable one makes LLVM call __powidf2, which Numba's
            # JIT does not provide (the plain kernel segfaults)
            n = Int(self.r.choice([-2, -1, 2, 3, 5]))
            if n.value < 0:
                a = self.nz(a)
            return Call("powi", (a, n))
        if k == "mod":
            a, b = self.fexpr(sc, d), self.fexpr(sc, d)
            den = self.pos(b) if self.chance(0.7) else Num(self.r.choice([0.7, 1.3, 2.5]))
            return Call("fmod", (a, den)) if self.chance(0.5) else Bin("%", a, den)
        if k == "ternary":
            return Call(self.r.choice(["fma", "fmuladd"]), tuple(self.fexpr(sc, d) for _ in range(3)))
        raise AssertionError(k)

    def _helper(self, name):
        for h in self.helpers:
            if h.name == name:
                return h
        raise KeyError(name)

    def unary(self, sc, d):
        a = self.fexpr(sc, d)
        cls = self.pick([(8, "any"), (4, "bounded"), (5, "pos"), (1.5, "nz"), (2, "unit"),
                         (1, "gt1"), (1, "tan")])
        if cls == "any":
            f = self.r.choice(UNARY_ANY)
            if f in _ROUNDING:       # piecewise constant: use it as a factor so it matters
                return Bin("*", Call(f, (Bin("*", a, Num(2.0)),)), self.fexpr(sc, d))
            return Call(f, (a,))
        if cls == "bounded":
            return Call(self.r.choice(UNARY_BOUNDED), (self.bounded(a),))
        if cls == "pos":
            return Call(self.r.choice(UNARY_POS), (self.pos(a),))
        if cls == "nz":
            return Call(self.r.choice(UNARY_NZ), (self.nz(a),))
        if cls == "unit":
            return Call(self.r.choice(UNARY_UNIT), (self.unit(a),))
        if cls == "gt1":
            return Call("acosh", (Bin("+", Num(1.0), self.pos(a)),))
        t = self.pick([(2, lambda: Bin("*", Num(1.3), Call("tanh", (a,)))),
                       (1, lambda: Call("sin", (a,))), (1, lambda: a)])()
        return Call("tan", (t,))

    # domain maps -----------------------------------------------------------------------------
    def _is_positive_source(self, e):
        return (isinstance(e, Load) and e.arr in self.positive) or \
               (isinstance(e, Name) and e.name in self.positive)

    def pos(self, e):
        """e mapped to a positive value away from 0."""
        if self._is_positive_source(e) and self.chance(0.6):
            return e
        return self.pick([
            (3, lambda: Bin("+", Num(0.5), Bin("*", e, copy.deepcopy(e)))),
            (2, lambda: Bin("+", Num(1.0), Call("abs", (e,)))),
            (1, lambda: Call("exp", (Call("sin", (e,)),))),
            (1, lambda: Bin("+", Num(2.0), Call("cos", (e,)))),
            (1, lambda: Call("hypot", (e, Num(0.5)))),
            (0.5, lambda: e),
        ])()

    def nz(self, e):
        """e kept away from 0."""
        return self.pick([(2, lambda: e), (2, lambda: self.pos(e)),
                          (1, lambda: Neg(self.pos(e)))])()

    def unit(self, e):
        """e mapped into (-0.9, 0.9)."""
        return self.pick([(3, lambda: Bin("*", Num(0.9), Call("tanh", (e,)))),
                          (2, lambda: Bin("*", Num(0.8), Call("sin", (e,)))),
                          (1, lambda: Bin("/", e, Bin("+", Num(1.5), Call("abs", (copy.deepcopy(e),))))),
                          (0.3, lambda: e)])()

    def bounded(self, e, small=False):
        """e kept to a moderate range (exp-like functions overflow otherwise)."""
        return self.pick([(1 if small else 3, lambda: e),
                          (2, lambda: Bin("*", Num(2.0), Call("tanh", (e,)))),
                          (1, lambda: Call("sin", (e,))),
                          (1, lambda: Bin("*", e, Num(0.5)))])()

    def cmp(self, sc):
        op = self.r.choice(["<", "<=", ">", ">="])
        a = self.fexpr(sc, 2)
        b = self.fexpr(sc, 1) if self.chance(0.5) else self.num()
        return Cmp(op, a, b)


def _is_array_helper(h):
    return any(k.startswith("arr:") for _, k in h.params)


def _walk(block):
    return walk_stmts(block)


def generate(seed: int, config: Optional[Config] = None) -> Program:
    """The random program for `seed` (deterministic); a `parallel.ParKernel` for the parallel
    profile, an `exits.ExitKernel` for the exits profile, a `complex_data.ComplexKernel` for the
    complex profile, a `containers.ContainerKernel` for the lists, dicts and optional profiles."""
    if config is not None and config.parallel:
        return generate_parallel(seed)
    if config is not None and config.exits:
        return generate_exits(seed)
    if config is not None and config.complex_data:
        return generate_complex(seed)
    if config is not None and config.containers:
        return generate_containers(seed, config.containers)
    return Generator(seed, config).program()
