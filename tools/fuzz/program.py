"""The fuzzer's kernel representation: a small statement/expression tree printed as Python.

A `Program` is one kernel (plus helpers) with its argument values. It prints two ways:

- `render(prog)` the plain kernel `kern` and its `@njit` helpers: what `autodiff` differentiates;
- `render(prog, traced=True)` the same code as plain Python `kern_traced(..., tr, tf)`, where
  every decision (comparison, abs, min/max, rounding, float->int, modulo) is recorded and every
  assigned or stored value and every argument of a function with a restricted domain is measured
  (see `prims_py.py`). The checker runs it at perturbed inputs to make sure no decision is close
  to its boundary.

`validate(prog)` checks the invariants that make a program a valid, deterministic kernel whose
finite differences mean something (names defined before use with block scoping, indices in
bounds, `break` only in loops, no differentiable data written into Const memory). The generator
only builds valid programs; the shrinker uses it to reject invalid reductions without compiling.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from enzyme_py.annotations import Active, Const, Duplicated


# ---------------------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------------------

class Node:
    def children(self):
        return ()


@dataclass
class Num(Node):
    """A float literal; f32=True prints np.float32(v) (keeps float32 arithmetic float32)."""
    value: float
    f32: bool = False


@dataclass
class Int(Node):
    value: int


@dataclass
class Name(Node):
    """A scalar local, scalar parameter, loop variable or while counter."""
    name: str


@dataclass
class Shape(Node):
    arr: str
    axis: int


@dataclass
class Load(Node):
    arr: str
    idx: tuple

    def children(self):
        return self.idx


@dataclass
class Bin(Node):
    """+ - * / % ** on floats or ints."""
    op: str
    a: Node
    b: Node

    def children(self):
        return (self.a, self.b)


@dataclass
class Neg(Node):
    a: Node

    def children(self):
        return (self.a,)


@dataclass
class Call(Node):
    """A function of FUNCS (a math/NumPy function or a prims intrinsic)."""
    fn: str
    args: tuple

    def children(self):
        return self.args


@dataclass
class HCall(Node):
    """A call of a generated helper."""
    helper: str
    args: tuple

    def children(self):
        return self.args


@dataclass
class Cmp(Node):
    op: str          # < <= > >=
    a: Node
    b: Node

    def children(self):
        return (self.a, self.b)


@dataclass
class IfExp(Node):
    cond: Cmp
    a: Node
    b: Node

    def children(self):
        return (self.cond, self.a, self.b)


@dataclass
class Cast(Node):
    """np.float32(e), np.float64(e) or float(e)."""
    to: str          # "f32", "f64", "float"
    a: Node

    def children(self):
        return (self.a,)


@dataclass
class ToFloat(Node):
    """float(i) of an integer expression."""
    a: Node

    def children(self):
        return (self.a,)


@dataclass
class DataInt(Node):
    """min(int(abs(e) * scale), hi): an integer that depends on float data (range 0..hi)."""
    a: Node
    scale: float
    hi: int

    def children(self):
        return (self.a,)


@dataclass
class IMin(Node):
    a: Node
    b: Node

    def children(self):
        return (self.a, self.b)


@dataclass
class Reduce(Node):
    """np.sum(arr) / np.max(arr) ... of a whole array parameter."""
    fn: str
    arr: str


# ---------------------------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------------------------

@dataclass
class Assign(Node):
    """name = expr, or name op= expr."""
    name: str
    expr: Node
    op: Optional[str] = None

    def children(self):
        return (self.expr,)


@dataclass
class Store(Node):
    arr: str
    idx: tuple
    expr: Node
    op: Optional[str] = None

    def children(self):
        return tuple(self.idx) + (self.expr,)


@dataclass
class Range:
    start: Optional[Node]
    stop: Node
    step: int = 1


@dataclass
class For(Node):
    var: str
    rng: Range
    body: list


@dataclass
class While(Node):
    """counter = 0; while counter < bound [and cond]: body; counter += 1"""
    counter: str
    bound: int
    cond: Optional[Cmp]
    body: list


@dataclass
class If(Node):
    cond: Cmp
    body: list
    orelse: list


@dataclass
class Break(Node):
    pass


@dataclass
class Return(Node):
    expr: Node

    def children(self):
        return (self.expr,)


@dataclass
class CallStmt(Node):
    """A helper call as a statement, optionally assigned: [name =] h(...)."""
    call: HCall
    name: Optional[str] = None

    def children(self):
        return (self.call,)


@dataclass
class Temp(Node):
    """name = np.empty/zeros(shape, dtype), then (empty only) every element set to `fill`,
    which may use the fill loop variables `fill_vars` (one per dimension)."""
    name: str
    dims: tuple          # size labels, e.g. ("N",) or ("R", "C")
    dtype: str           # "f64" / "f32"
    ctor: str            # "empty" / "zeros"
    fill_vars: tuple
    fill: Optional[Node]

    def children(self):
        return (self.fill,) if self.fill is not None else ()


@dataclass
class Raise(Node):
    """if cond: raise ValueError(...) -- never taken for the generated inputs."""
    cond: Cmp

    def children(self):
        return (self.cond,)


# ---------------------------------------------------------------------------------------------
# Parameters, helpers, programs
# ---------------------------------------------------------------------------------------------

@dataclass
class Param:
    """A kernel argument.

    kind: "arr" (float array), "iarr" (int64 index array, Const), "float" (scalar), "int" (Const).
    ann: "dup", "const" or "active".
    For arrays: dims are size labels ("N",) / ("R", "C"); layout "C", "F" or "S" (a strided view,
    every other element of a larger buffer); value (and shadow for dup) hold the numbers.
    For "int": value = max(0, size(dims[0]) - offset) (a trip count).
    """
    name: str
    kind: str
    ann: str
    dtype: str = "f64"
    dims: tuple = ()
    layout: str = "C"
    value: object = None
    shadow: object = None
    offset: int = 0


@dataclass
class Helper:
    """@njit def name(params): body; return ret   (params: list of (name, kind), kind "f",
    "i", or "arr:<label>")."""
    name: str
    params: list
    body: list
    ret: Optional[Node]


@dataclass
class Program:
    seed: int
    sizes: Dict[str, int]
    params: List[Param]
    helpers: List[Helper]
    body: list
    returns: bool            # the kernel returns a float (final statement: Return)
    ret_seed: object = 1.0   # a float; with forms.ret, a seed of the return value's structure
    features: set = field(default_factory=set)
    memory: str = "tape"     # the gradient's memory= (generator.Config.memory)
    forms: object = None     # callers.CallForms (profile "callers"): declarations and call

    def param(self, name) -> Optional[Param]:
        for p in self.params:
            if p.name == name:
                return p
        return None

    def helper(self, name) -> Optional[Helper]:
        for h in self.helpers:
            if h.name == name:
                return h
        return None

    def uses_f32(self) -> bool:
        """Whether float32 arithmetic appears anywhere (arguments, literals, casts, temps)."""
        for p in self.params:
            if p.dtype == "f32":
                return True
        for n in walk_all(self):
            if isinstance(n, Num) and n.f32:
                return True
            if isinstance(n, Cast) and n.to == "f32":
                return True
            if isinstance(n, Temp) and n.dtype == "f32":
                return True
        return False


# ---------------------------------------------------------------------------------------------
# Walking
# ---------------------------------------------------------------------------------------------

def stmt_blocks(s):
    """The statement lists nested in statement s."""
    if isinstance(s, (For, While)):
        return [s.body]
    if isinstance(s, If):
        return [s.body, s.orelse]
    return []


def walk_stmts(block):
    """Every statement of a block, recursively (pre-order)."""
    for s in block:
        yield s
        for b in stmt_blocks(s):
            yield from walk_stmts(b)


def walk_expr(e):
    yield e
    for c in e.children():
        if c is not None:
            yield from walk_expr(c)


def stmt_exprs(s):
    """The expression trees directly held by statement s."""
    out = []
    if isinstance(s, (Assign, Store, Return, CallStmt, Raise, Temp)):
        out.extend(c for c in s.children() if c is not None)
    elif isinstance(s, For):
        if s.rng.start is not None:
            out.append(s.rng.start)
        out.append(s.rng.stop)
    elif isinstance(s, While):
        if s.cond is not None:
            out.append(s.cond)
    elif isinstance(s, If):
        out.append(s.cond)
    return out


def walk_all(prog):
    """Every statement and expression node of the kernel and its helpers."""
    blocks = [prog.body] + [h.body for h in prog.helpers]
    for b in blocks:
        for s in walk_stmts(b):
            yield s
            for e in stmt_exprs(s):
                yield from walk_expr(e)
    for h in prog.helpers:
        if h.ret is not None:
            yield from walk_expr(h.ret)


def count_nodes(prog) -> int:
    return sum(1 for _ in walk_all(prog)) + len(prog.params) + sum(prog.sizes.values())


# ---------------------------------------------------------------------------------------------
# Function table: spelling, decision recording (traced), domain (margin) recording
# ---------------------------------------------------------------------------------------------

# key -> (arity, plain format, traced format or None, domain or None)
# traced formats receive the argument texts and must compute exactly the plain value.
# domain: ("pos", lo) margin = a - lo; ("unit",) margin = 1 - |a|; ("nz",) margin = |a|;
# ("tan",) margin to the nearest pole; ("hyp",) margin = |a| + |b|.
FUNCS: Dict[str, tuple] = {
    "sin": (1, "math.sin({0})", None, None),
    "cos": (1, "math.cos({0})", None, None),
    "np.sin": (1, "np.sin({0})", None, None),
    "np.cos": (1, "np.cos({0})", None, None),
    "tan": (1, "math.tan({0})", None, ("tan",)),
    "exp": (1, "math.exp({0})", None, None),
    "np.exp": (1, "np.exp({0})", None, None),
    # np.exp2 of float32 and of float64 in one module collide in Numba (one `llvm.exp2`
    # declaration, no type suffix): keep it float64
    "exp2": (1, "np.exp2(np.float64({0}))", None, None),
    "pow2": (1, "2.0 ** {0}", None, None),
    "exp10": (1, "prims.exp10(np.float64({0}))", None, None),
    "libm_exp": (1, "prims.libm_exp(np.float64({0}))", None, None),
    "expm1": (1, "math.expm1({0})", None, None),
    "sinh": (1, "math.sinh({0})", None, None),
    "cosh": (1, "math.cosh({0})", None, None),
    "tanh": (1, "math.tanh({0})", None, None),
    "np.tanh": (1, "np.tanh({0})", None, None),
    "log": (1, "math.log({0})", None, ("pos", 0.0)),
    "np.log": (1, "np.log({0})", None, ("pos", 0.0)),
    "log2": (1, "math.log2({0})", None, ("pos", 0.0)),
    "log10": (1, "math.log10({0})", None, ("pos", 0.0)),
    "log1p": (1, "math.log1p({0})", None, ("pos", -1.0)),
    "sqrt": (1, "math.sqrt({0})", None, ("pos", 0.0)),
    "np.sqrt": (1, "np.sqrt({0})", None, ("pos", 0.0)),
    "lgamma": (1, "math.lgamma({0})", None, ("pos", 0.0)),
    "cbrt": (1, "np.cbrt({0})", None, ("nz",)),
    "libm_cbrt": (1, "prims.libm_cbrt(np.float64({0}))", None, ("nz",)),
    "asin": (1, "math.asin({0})", None, ("unit",)),
    "acos": (1, "math.acos({0})", None, ("unit",)),
    "atanh": (1, "math.atanh({0})", None, ("unit",)),
    "acosh": (1, "math.acosh({0})", None, ("pos", 1.0)),
    "atan": (1, "math.atan({0})", None, None),
    "asinh": (1, "math.asinh({0})", None, None),
    "erf": (1, "math.erf({0})", None, None),
    "erfc": (1, "math.erfc({0})", None, None),
    "abs": (1, "abs({0})", "abs(prims.t_sign({0}, tr))", None),
    "fabs": (1, "math.fabs({0})", "math.fabs(prims.t_sign({0}, tr))", None),
    "floor": (1, "np.floor({0})", "np.floor(prims.t_floor({0}, tr))", None),
    "ceil": (1, "np.ceil({0})", "np.ceil(prims.t_ceil({0}, tr))", None),
    "trunc": (1, "np.trunc({0})", "np.trunc(prims.t_trunc({0}, tr))", None),
    "rint": (1, "np.rint({0})", "np.rint(prims.t_rint({0}, tr))", None),
    "nearbyint": (1, "prims.nearbyint(np.float64({0}))", "prims.nearbyint(prims.t_rint(np.float64({0}), tr))", None),
    "llvm_round": (1, "prims.llvm_round(np.float64({0}))", "prims.llvm_round(prims.t_rint(np.float64({0}), tr))", None),
    "pyround": (1, "float(round({0}))", "float(round(prims.t_rint({0}, tr)))", None),
    "roundeven": (1, "prims.roundeven(np.float64({0}))", "prims.roundeven(prims.t_rint(np.float64({0}), tr))", None),
    "copysign": (2, "math.copysign({0}, {1})", "prims.t_copysign({0}, {1}, tr)", None),
    "atan2": (2, "math.atan2({0}, {1})", None, ("pos2", 0.0)),
    "hypot": (2, "math.hypot({0}, {1})", None, ("hyp",)),
    "pow": (2, "{0} ** {1}", None, ("pos", 0.0)),
    "math.pow": (2, "math.pow({0}, {1})", None, ("pos", 0.0)),
    "powi": (2, "prims.powi(np.float64({0}), {1})", None, None),
    "min": (2, "min({0}, {1})", "prims.t_min({0}, {1}, tr)", None),
    "max": (2, "max({0}, {1})", "prims.t_max({0}, {1}, tr)", None),
    "np.fmin": (2, "np.fmin({0}, {1})", "prims.t_fmin({0}, {1}, tr)", None),
    "np.fmax": (2, "np.fmax({0}, {1})", "prims.t_fmax({0}, {1}, tr)", None),
    "minnum": (2, "prims.minnum(np.float64({0}), np.float64({1}))",
               "prims.t_minnum(np.float64({0}), np.float64({1}), tr)", None),
    "maxnum": (2, "prims.maxnum(np.float64({0}), np.float64({1}))",
               "prims.t_maxnum(np.float64({0}), np.float64({1}), tr)", None),
    "fmod": (2, "np.fmod({0}, {1})", "prims.t_fmod({0}, {1}, tr)", ("nz2",)),
    "fma": (3, "prims.fma(np.float64({0}), np.float64({1}), np.float64({2}))", None, None),
    "fmuladd": (3, "prims.fmuladd(np.float64({0}), np.float64({1}), np.float64({2}))", None, None),
}

DECISION_FUNCS = {k for k, v in FUNCS.items() if v[2] is not None}

REDUCE_FUNCS = {"sum": "np.sum({0})", "max": "np.max({0})", "min": "np.min({0})",
                "dot": "np.dot({0}, {0})", "prod": "np.prod({0})"}
# profile "linalg": NumPy calls that copy or allocate, on a 1-D array ...
_GRAM = "({0} @ {0}.T + np.diag(np.full({0}.shape[0], 4.0, {0}.dtype)))"   # symmetric positive definite
LINALG_1D = {"norm": "np.linalg.norm({0})", "sortw": "np.sum(np.sort({0}) * {0})",
             "median": "np.median({0})", "diffcopy": "np.sum(np.diff({0}.copy()) ** 2)",
             "outer": "np.sum(np.outer({0}, {0}) @ {0})"}
# ... and BLAS / LAPACK on a 2-D one
LINALG_2D = {"gram": "np.sum({0} @ {0}.T)", "matvec": "np.sum(np.tanh({0}.T @ {0}[:, 0]))",
             "logdet": "np.linalg.slogdet(" + _GRAM + ")[1]",
             "solve": "np.sum(np.linalg.solve(" + _GRAM + ", {0}[:, 0]))",
             "chol": "np.sum(np.linalg.cholesky(" + _GRAM + "))",
             "eigvalsh": "np.sum(np.linalg.eigvalsh(" + _GRAM + ") ** 2)",
             "inv": "np.sum(np.linalg.inv(" + _GRAM + "))",
             # a copy that only BLAS reads (its float type only from the source's dtype)
             "copymat": "np.sum(np.tanh({0}.copy() @ {0}[0]))"}
REDUCE_FUNCS.update(LINALG_1D)
REDUCE_FUNCS.update(LINALG_2D)


# ---------------------------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------------------------

_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2, "**": 4}


def _num(v: float, f32: bool) -> str:
    t = repr(float(v))
    return f"np.float32({t})" if f32 else (f"({t})" if v < 0 else t)


class Printer:
    def __init__(self, prog: Program, traced: bool):
        self.prog = prog
        self.traced = traced
        self.lines: List[str] = []

    # expressions ---------------------------------------------------------------------------
    def ex(self, e) -> str:
        t = self.traced
        if isinstance(e, Num):
            if t and not e.f32:      # a strong float64, as in Numba (NumPy treats 0.5 as weak)
                return f"np.float64({float(e.value)!r})"
            return _num(e.value, e.f32)
        if isinstance(e, Int):
            return f"({e.value})" if e.value < 0 else str(e.value)
        if isinstance(e, Name):
            return e.name
        if isinstance(e, Shape):
            return f"{e.arr}.shape[{e.axis}]"
        if isinstance(e, Load):
            return f"{e.arr}[{', '.join(self.ex(i) for i in e.idx)}]"
        if isinstance(e, Bin):
            a, b = self.ex(e.a), self.ex(e.b)
            if t and e.op == "%":
                return f"prims.t_mod({a}, {b}, tr)"
            if t and e.op == "/":
                return f"({a} / prims.t_den({b}, tf))"
            return f"({a} {e.op} {b})"
        if isinstance(e, Neg):
            return f"(-{self.ex(e.a)})"
        if isinstance(e, Call):
            arity, plain, traced, dom = FUNCS[e.fn]
            args = [self.ex(a) for a in e.args]
            if t and dom is not None:
                args = self._domain(dom, args)
            fmt = traced if (t and traced) else plain
            return "(" + fmt.format(*args) + ")" if " ** " in fmt else fmt.format(*args)
        if isinstance(e, HCall):
            args = [self.ex(a) for a in e.args]
            if t:
                return f"{e.helper}_t({', '.join(args + ['tr', 'tf'])})"
            return f"{e.helper}({', '.join(args)})"
        if isinstance(e, Cmp):
            a, b = self.ex(e.a), self.ex(e.b)
            if t:
                return f"prims.t_cmp({a}, {b}, {_CMP_CODE[e.op]}, tr)"
            return f"{a} {e.op} {b}"
        if isinstance(e, IfExp):
            return f"({self.ex(e.a)} if {self.ex(e.cond)} else {self.ex(e.b)})"
        if isinstance(e, Cast):
            fn = {"f32": "np.float32", "f64": "np.float64", "float": "pp.t_float" if t else "float"}[e.to]
            return f"{fn}({self.ex(e.a)})"
        if isinstance(e, ToFloat):
            return f"{'np.float64' if t else 'float'}({self.ex(e.a)})"
        if isinstance(e, DataInt):
            inner = f"int(abs({self.ex(e.a)}) * {e.scale!r})"
            if t:
                inner = f"prims.t_int({inner}, tr)"
            return f"min({inner}, {e.hi})"
        if isinstance(e, IMin):
            return f"min({self.ex(e.a)}, {self.ex(e.b)})"
        if isinstance(e, Reduce):
            if t and e.fn in ("max", "min"):
                return f"prims.t_arg{e.fn}(np.{e.fn}({e.arr}), {e.arr}, tr)"
            return REDUCE_FUNCS[e.fn].format(e.arr)
        raise TypeError(f"cannot print {e!r}")

    def _domain(self, dom, args):
        kind = dom[0]
        if kind == "pos":
            return [f"prims.t_pos({args[0]}, {dom[1]!r}, tf)"] + args[1:]
        if kind == "unit":
            return [f"prims.t_unit({args[0]}, tf)"]
        if kind == "nz":
            return [f"prims.t_nz({args[0]}, tf)"]
        if kind == "nz2":
            return [args[0], f"prims.t_nz({args[1]}, tf)"]
        if kind == "pos2":
            return [args[0], f"prims.t_pos({args[1]}, 0.0, tf)"]
        if kind == "tan":
            return [f"prims.t_tan({args[0]}, tf)"]
        if kind == "hyp":
            return [f"prims.t_hyp({args[0]}, {args[1]}, tf)", args[1]]
        raise ValueError(kind)

    def val(self, text: str) -> str:
        """A stored/assigned value, measured in the traced version."""
        return f"prims.t_val({text}, tf)" if self.traced else text

    # statements ----------------------------------------------------------------------------
    def emit(self, ind: int, text: str):
        self.lines.append("    " * ind + text)

    def block(self, stmts, ind):
        if not stmts:
            self.emit(ind, "pass")
        for s in stmts:
            self.stmt(s, ind)

    def stmt(self, s, ind):
        if isinstance(s, Assign):
            op = f" {s.op}= " if s.op else " = "
            self.emit(ind, f"{s.name}{op}{self.val(self.ex(s.expr))}")
            if s.op and self.traced:
                self.emit(ind, f"prims.t_val({s.name}, tf)")
        elif isinstance(s, Store):
            tgt = f"{s.arr}[{', '.join(self.ex(i) for i in s.idx)}]"
            op = f" {s.op}= " if s.op else " = "
            self.emit(ind, f"{tgt}{op}{self.val(self.ex(s.expr))}")
            if s.op and self.traced:
                self.emit(ind, f"prims.t_val({tgt}, tf)")
        elif isinstance(s, For):
            r = s.rng
            if r.start is None and r.step == 1:
                rng = f"range({self.ex(r.stop)})"
            elif r.step == 1:
                rng = f"range({self.ex(r.start)}, {self.ex(r.stop)})"
            else:
                rng = f"range({self.ex(r.start) if r.start is not None else '0'}, {self.ex(r.stop)}, {r.step})"
            self.emit(ind, f"for {s.var} in {rng}:")
            self.block(s.body, ind + 1)
        elif isinstance(s, While):
            self.emit(ind, f"{s.counter} = 0")
            cond = f"{s.counter} < {s.bound}"
            if s.cond is not None:
                cond += f" and {self.ex(s.cond)}"
            self.emit(ind, f"while {cond}:")
            self.block(s.body, ind + 1)
            self.emit(ind + 1, f"{s.counter} += 1")
        elif isinstance(s, If):
            self.emit(ind, f"if {self.ex(s.cond)}:")
            self.block(s.body, ind + 1)
            if s.orelse:
                self.emit(ind, "else:")
                self.block(s.orelse, ind + 1)
        elif isinstance(s, Break):
            self.emit(ind, "break")
        elif isinstance(s, Return):
            tail = self._ret_tail()
            value = self.val(self.ex(s.expr))
            self.emit(ind, f"return ({value}, {tail})" if tail else f"return {value}")
        elif isinstance(s, CallStmt):
            call = self.ex(s.call)
            self.emit(ind, f"{s.name} = {self.val(call)}" if s.name else call)
        elif isinstance(s, Temp):
            shape = ", ".join(self._size(d) for d in s.dims)
            if len(s.dims) > 1:
                shape = f"({shape})"
            dt = "np.float32" if s.dtype == "f32" else "np.float64"
            self.emit(ind, f"{s.name} = np.{s.ctor}({shape}, {dt})")
            if s.fill is not None:
                for k, (v, d) in enumerate(zip(s.fill_vars, s.dims)):
                    self.emit(ind + k, f"for {v} in range({self._size(d)}):")
                tgt = f"{s.name}[{', '.join(s.fill_vars)}]"
                self.emit(ind + len(s.dims), f"{tgt} = {self.val(self.ex(s.fill))}")
        elif isinstance(s, Raise):
            self.emit(ind, f"if {self.ex(s.cond)}:")
            self.emit(ind + 1, "raise ValueError('fuzz: unexpected value')")
        else:
            raise TypeError(f"cannot print {s!r}")

    def _ret_tail(self) -> str:
        """What a tuple return (callers.py) adds after the float value."""
        forms = self.prog.forms
        if forms is None or forms.ret is None or forms.ret[0] != "tuple" or not self.prog.returns:
            return ""
        x = forms.ret[1]
        return f"{x}, {x}.shape[0]" if forms.ret[2] else x

    def _decorator(self, options) -> None:
        if not self.traced:
            self.emit(0, f"@njit({', '.join(options)})" if options else "@njit")

    def _size(self, label) -> str:
        """How a size is spelled: the shape of a parameter array with that dimension."""
        for p in self.prog.params:
            if p.kind in ("arr", "iarr") and label in p.dims:
                return f"{p.name}.shape[{p.dims.index(label)}]"
        return str(self.prog.sizes[label])

    # functions -----------------------------------------------------------------------------
    def helper(self, h: Helper):
        params = [n for n, _ in h.params]
        name = h.name
        if self.traced:
            params += ["tr", "tf"]
            name += "_t"
        forms = self.prog.forms
        sig = forms is not None and h.name in forms.sig_helpers
        local = forms is not None and h.name in forms.locals_helpers
        options = []
        if sig:     # every parameter is a float (callers.py)
            options.append(repr("f8(" + ", ".join("f8" for _ in h.params) + ")"))
        if local:
            floats = ", ".join(f"{n!r}: numba.float64" for n, k in h.params if k == "f")
            options.append(f"locals={{{floats}}}")
        if forms is not None and forms.cache:
            options.append("cache=True")
        self._decorator(options)
        self.emit(0, f"def {name}({', '.join(params)}):")
        if self.traced and (sig or local):      # Numba converts them to float64 on entry
            for n, k in h.params:
                if k == "f":
                    self.emit(1, f"{n} = np.float64({n})")
        for s in h.body:
            self.stmt(s, 1)
        ret = self.ex(h.ret) if h.ret is not None else "0.0"
        if sig and self.traced:
            ret = f"np.float64({ret})"
        self.emit(1, f"return {ret}")
        self.emit(0, "")
        self.emit(0, "")

    def kernel(self):
        forms = self.prog.forms
        defaults = forms.defaults if forms is not None else {}
        params = [f"{p.name}={defaults[p.name]!r}" if p.name in defaults else p.name
                  for p in self.prog.params]
        name = "kern"
        if self.traced:         # called with every argument, positionally
            params = [p.name for p in self.prog.params] + ["tr", "tf"]
            name = "kern_traced"
        self._decorator(["cache=True"] if forms is not None and forms.cache else [])
        self.emit(0, f"def {name}({', '.join(params)}):")
        self.block(self.prog.body, 1)
        if forms is not None and forms.ret is not None and not self.prog.returns:
            self.emit(1, f"return {forms.ret[1]}")


_CMP_CODE = {"<": 0, "<=": 1, ">": 2, ">=": 3}

HEADER = "import math\n\nimport numpy as np\nfrom numba import njit\n\nfrom tools.fuzz import prims\n"
HEADER_TRACED = "import math\n\nimport numpy as np\n\nfrom tools.fuzz import prims_py as pp\n"


def used_helpers(prog) -> List[Helper]:
    """Helpers reachable from the kernel (helpers may call earlier helpers)."""
    names = set()
    todo = [prog.body]
    seen_h = set()
    while todo:
        blk = todo.pop()
        for s in walk_stmts(blk):
            for e in stmt_exprs(s):
                for n in walk_expr(e):
                    if isinstance(n, HCall) and n.helper not in seen_h:
                        seen_h.add(n.helper)
                        h = prog.helper(n.helper)
                        if h is not None:
                            names.add(h.name)
                            todo.append(h.body + ([Return(h.ret)] if h.ret is not None else []))
    return [h for h in prog.helpers if h.name in names]


def render_functions(prog: Program, traced: bool = False) -> str:
    """The helpers and the kernel, without imports. traced=True: the plain-Python traced copy
    (`kern_traced(..., tr, tf)`, helpers `<name>_t`, intrinsics and recorders from `pp`, the
    `prims_py` module)."""
    p = Printer(prog, traced)
    for h in used_helpers(prog):
        p.helper(h)
    p.kernel()
    text = "\n".join(p.lines) + "\n"
    return text.replace("prims.", "pp.") if traced else text


def render(prog: Program, traced: bool = False) -> str:
    """A complete module defining `kern` (or the traced copy `kern_traced`) and its helpers."""
    if traced:
        return HEADER_TRACED + "\n\n" + render_functions(prog, True)
    header = HEADER if prog.forms is None else HEADER.replace("import numpy", "import numba\nimport numpy")
    return header + "\n\n" + render_functions(prog)


# ---------------------------------------------------------------------------------------------
# Argument values
# ---------------------------------------------------------------------------------------------

def shape_of(prog, p: Param) -> tuple:
    return tuple(prog.sizes[d] for d in p.dims)


def layout_array(a: np.ndarray, layout: str) -> np.ndarray:
    """A copy of `a` in the given layout: "C", "F", or "S" (a view of every other element of
    a buffer twice as long in the last axis)."""
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "S":
        shape = a.shape[:-1] + (2 * a.shape[-1],) if a.ndim else a.shape
        buf = np.zeros(shape, dtype=a.dtype)
        view = buf[..., ::2]
        view[...] = a
        return view
    return np.ascontiguousarray(a)


def make_args(prog: Program):
    """Fresh annotated arguments (new arrays each call)."""
    out = []
    for p in prog.params:
        if p.kind in ("arr", "iarr"):
            v = layout_array(np.array(p.value), p.layout)
            if p.ann == "dup":
                s = layout_array(np.array(p.shadow, dtype=v.dtype), p.layout)
                out.append(Duplicated(v, s))
            else:
                out.append(Const(v))
        elif p.kind == "float":
            v = np.float32(p.value) if p.dtype == "f32" else float(p.value)
            out.append(Active(v) if p.ann == "active" else Const(v))
        else:
            out.append(Const(int_value(prog, p)))
    return out


def make_call(prog: Program):
    """Fresh annotated arguments as the call passes them: (positional, keyword); defaults left
    out and keywords as the program's call forms say (callers.py)."""
    return split_call(prog, make_args(prog))


def split_call(prog, args):
    """(positional, keyword) arguments of the call under the program's forms, from one
    annotated argument per parameter (in parameter order)."""
    forms = getattr(prog, "forms", None)
    if forms is None:
        return list(args), {}
    pos, kw = [], {}
    skipped = False         # after a default left out, the rest can only go by keyword
    for p, a in zip(prog.params, args):
        if p.name in forms.omitted:
            skipped = True
        elif p.name in forms.keywords or skipped:
            kw[p.name] = a
        else:
            pos.append(a)
    return pos, kw


def int_value(prog, p: Param) -> int:
    return max(0, prog.sizes[p.dims[0]] - p.offset)


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------

class Invalid(Exception):
    pass


@dataclass
class _Scope:
    floats: set
    ints: Dict[str, Tuple[int, int]]     # int var -> (lo, hi) inclusive
    arrays: Dict[str, tuple]             # array -> dims labels
    in_loop: bool


class Validator:
    """Checks a Program (see module docstring). Raises Invalid with a reason."""

    def __init__(self, prog: Program):
        self.prog = prog
        self.const_arrays = {p.name for p in prog.params if p.kind in ("arr", "iarr") and p.ann == "const"}
        self.iarrays = {p.name: p for p in prog.params if p.kind == "iarr"}
        self.diff_scalars = {p.name for p in prog.params if p.kind == "float" and p.ann == "active"}
        self.helpers_ok = set()
        # names assigned anywhere in the kernel: a Const scalar parameter that is reassigned may
        # carry a derivative (loop-carried) and is not inactive
        self.assigned = {s.name for s in walk_stmts(prog.body)
                         if isinstance(s, (Assign, CallStmt)) and s.name}

    def run(self):
        prog = self.prog
        for k, v in prog.sizes.items():
            if v < 0:
                raise Invalid(f"size {k} < 0")
        for p in prog.params:
            if p.kind in ("arr", "iarr"):
                if np.shape(p.value) != shape_of(prog, p):
                    raise Invalid(f"{p.name}: value shape")
                if p.ann == "dup" and np.shape(p.shadow) != shape_of(prog, p):
                    raise Invalid(f"{p.name}: shadow shape")
            if p.kind == "iarr":
                size = prog.sizes[p.dims[0]]
                if np.size(p.value) and (np.min(p.value) < 0 or np.max(p.value) >= max(size, 1)):
                    raise Invalid(f"{p.name}: index values")
        helpers_seen = []
        for h in prog.helpers:
            self.helper(h, helpers_seen)
            helpers_seen.append(h.name)
        self.helpers_ok = set(helpers_seen)
        sc = _Scope(floats={p.name for p in prog.params if p.kind == "float"},
                    ints={p.name: (int_value(prog, p), int_value(prog, p))
                          for p in prog.params if p.kind == "int"},
                    arrays={p.name: p.dims for p in prog.params if p.kind in ("arr", "iarr")},
                    in_loop=False)
        self.block(prog.body, sc, helpers=self.helpers_ok, kernel=True)
        self.forms()
        if prog.returns:
            if not prog.body or not isinstance(prog.body[-1], Return):
                raise Invalid("kernel must end with return")
        else:
            for s in walk_stmts(prog.body):
                if isinstance(s, Return):
                    raise Invalid("return in a void kernel")

    def forms(self):
        """A returned array (callers.py) exists at every return: a Duplicated array parameter,
        or a temporary of the kernel's top level when nothing returns early."""
        forms = self.prog.forms
        if forms is None:
            return
        named = [p.name in forms.defaults for p in self.prog.params]
        if any(a and not b for a, b in zip(named, named[1:])):
            raise Invalid("a parameter without default after one with a default")
        if forms.ret is None:
            return
        x = forms.ret[1]
        p = self.prog.param(x)
        if p is not None:
            if p.kind != "arr" or p.ann != "dup":
                raise Invalid(f"returned {x} is not a Duplicated array")
            return
        if not any(isinstance(s, Temp) and s.name == x for s in self.prog.body):
            raise Invalid(f"returned {x} is not defined at the top level")
        final = self.prog.body[-1] if self.prog.returns else None
        if any(isinstance(s, Return) and s is not final for s in walk_stmts(self.prog.body)):
            raise Invalid(f"a return before {x} is defined")

    def helper(self, h: Helper, earlier):
        sc = _Scope(floats=set(), ints={}, arrays={}, in_loop=False)
        for n, kind in h.params:
            if kind == "f":
                sc.floats.add(n)
            elif kind == "i":
                sc.ints[n] = ("param", None)
            elif kind.startswith("arr:"):
                sc.arrays[n] = (kind[4:],)
        self.helpers_ok = set(earlier)
        self.block(h.body, sc, helpers=set(earlier), kernel=False)
        if h.ret is not None:
            self.fexpr(h.ret, sc, set(earlier))
        for s in walk_stmts(h.body):
            if isinstance(s, (Return, Temp)):
                raise Invalid("return/temp in helper")

    # ranges of integer expressions --------------------------------------------------------------
    def irange(self, e, sc) -> Tuple[int, int]:
        prog = self.prog
        if isinstance(e, Int):
            return (e.value, e.value)
        if isinstance(e, Name):
            if e.name not in sc.ints:
                raise Invalid(f"int {e.name} undefined")
            r = sc.ints[e.name]
            if r[0] == "param":
                raise Invalid("helper int param used outside indexing")
            return r
        if isinstance(e, Shape):
            if e.arr not in sc.arrays:
                raise Invalid(f"array {e.arr} undefined")
            dims = sc.arrays[e.arr]
            if e.axis >= len(dims):
                raise Invalid("bad axis")
            s = prog.sizes[dims[e.axis]]
            return (s, s)
        if isinstance(e, Bin) and e.op in ("+", "-", "%"):
            a, b = self.irange(e.a, sc), self.irange(e.b, sc)
            if e.op == "+":
                return (a[0] + b[0], a[1] + b[1])
            if e.op == "-":
                return (a[0] - b[1], a[1] - b[0])
            if b[0] <= 0:
                raise Invalid("modulo by a non-positive int")
            return (0, b[1] - 1)
        if isinstance(e, IMin):
            a, b = self.irange(e.a, sc), self.irange(e.b, sc)
            return (min(a[0], b[0]), min(a[1], b[1]))
        if isinstance(e, DataInt):
            self.fexpr(e.a, sc, self.helpers_ok)
            return (0, e.hi)
        if isinstance(e, Load) and e.arr in self.iarrays:
            self.index(e, sc)
            p = self.iarrays[e.arr]
            return (0, int(np.max(p.value)) if np.size(p.value) else 0)
        raise Invalid(f"not an int expression: {type(e).__name__}")

    def index(self, e, sc):
        if e.arr not in sc.arrays:
            raise Invalid(f"array {e.arr} undefined")
        dims = sc.arrays[e.arr]
        if len(e.idx) != len(dims):
            raise Invalid("index arity")
        for i, d in zip(e.idx, dims):
            if isinstance(i, Name) and sc.ints.get(i.name, (0,))[0] == "param":
                continue          # helper index parameter: checked at the call
            lo, hi = self.irange(i, sc)
            s = self.prog.sizes[d]
            if lo < -s or hi > s - 1:
                raise Invalid(f"index of {e.arr} out of bounds")

    # float expressions ------------------------------------------------------------------------
    def fexpr(self, e, sc, helpers):
        if isinstance(e, Num):
            return
        if isinstance(e, Name):
            if e.name in sc.floats:
                return
            if e.name in sc.ints:
                raise Invalid("int used as float")
            raise Invalid(f"float {e.name} undefined")
        if isinstance(e, Load):
            if e.arr in self.iarrays:
                raise Invalid("int array read as float")
            self.index(e, sc)
            return
        if isinstance(e, (Bin,)):
            if e.op == "**" and isinstance(e.b, (Int, Name)) and not (isinstance(e.b, Name) and e.b.name in sc.floats):
                self.fexpr(e.a, sc, helpers)
                self.irange(e.b, sc)
                return
            self.fexpr(e.a, sc, helpers)
            self.fexpr(e.b, sc, helpers)
            return
        if isinstance(e, Neg):
            return self.fexpr(e.a, sc, helpers)
        if isinstance(e, Call):
            if e.fn not in FUNCS or FUNCS[e.fn][0] != len(e.args):
                raise Invalid(f"bad call {e.fn}")
            if e.fn == "powi":
                self.fexpr(e.args[0], sc, helpers)
                if not isinstance(e.args[1], Int):
                    raise Invalid("powi needs a literal exponent (no __powidf2 in Numba's JIT)")
                return
            for a in e.args:
                self.fexpr(a, sc, helpers)
            return
        if isinstance(e, HCall):
            h = self.prog.helper(e.helper)
            if h is None or e.helper not in helpers:
                raise Invalid(f"helper {e.helper} unavailable")
            if len(h.params) != len(e.args):
                raise Invalid("helper arity")
            arr_param = {}
            for (pn, kind), a in zip(h.params, e.args):
                if kind == "f":
                    self.fexpr(a, sc, helpers)
                elif kind.startswith("arr:"):
                    if not isinstance(a, Name) or a.name not in sc.arrays or a.name in self.iarrays:
                        raise Invalid("helper array argument")
                    if a.name in self.const_arrays:
                        raise Invalid("helper writes a const array")
                    if sc.arrays[a.name] != (kind[4:],):
                        raise Invalid("helper array dims")
                    arr_param[pn] = a.name
            for (pn, kind), a in zip(h.params, e.args):
                if kind == "i":
                    lo, hi = self.irange(a, sc)
                    s = self.prog.sizes[_helper_index_dim(h, pn)]
                    if lo < -s or hi > s - 1:
                        raise Invalid("helper index out of bounds")
            return
        if isinstance(e, Cmp):
            self.fexpr(e.a, sc, helpers)
            self.fexpr(e.b, sc, helpers)
            return
        if isinstance(e, IfExp):
            self.fexpr(e.cond, sc, helpers)
            self.fexpr(e.a, sc, helpers)
            self.fexpr(e.b, sc, helpers)
            return
        if isinstance(e, Cast):
            return self.fexpr(e.a, sc, helpers)
        if isinstance(e, ToFloat):
            self.irange(e.a, sc)
            return
        if isinstance(e, Reduce):
            if e.arr not in sc.arrays or e.arr in self.iarrays:
                raise Invalid("reduce of unknown array")
            if any(self.prog.sizes[d] < 1 for d in sc.arrays[e.arr]):
                raise Invalid("reduce of an empty array")
            return
        raise Invalid(f"not a float expression: {type(e).__name__}")

    def inactive(self, e, sc) -> bool:
        """Whether e certainly carries no derivative (may be stored into Const memory)."""
        for n in walk_expr(e):
            if isinstance(n, Name) and n.name in sc.floats:
                p = self.prog.param(n.name)
                if p is None or p.ann == "active" or n.name in self.assigned:
                    return False
            if isinstance(n, (Load, Reduce)) and n.arr not in self.const_arrays:
                return False
            if isinstance(n, HCall):
                return False
        return True

    # statements ------------------------------------------------------------------------------
    def block(self, stmts, sc: _Scope, helpers, kernel):
        sc = _Scope(set(sc.floats), dict(sc.ints), dict(sc.arrays), sc.in_loop)
        for k, s in enumerate(stmts):
            if isinstance(s, (Return, Break)) and k != len(stmts) - 1:
                raise Invalid("dead code after return/break")
            self.stmt(s, sc, helpers, kernel)

    def stmt(self, s, sc: _Scope, helpers, kernel):
        if isinstance(s, Assign):
            if s.name in sc.ints or s.name in sc.arrays:
                raise Invalid("assign to int/array name")
            if s.op and s.name not in sc.floats:
                raise Invalid(f"{s.name} updated before definition")
            self.fexpr(s.expr, sc, helpers)
            sc.floats.add(s.name)
        elif isinstance(s, Store):
            self.index(Load(s.arr, s.idx), sc)
            if s.arr in self.iarrays:
                raise Invalid("store into int array")
            self.fexpr(s.expr, sc, helpers)
            if s.arr in self.const_arrays and not self.inactive(s.expr, sc):
                raise Invalid("differentiable value stored into a Const array")
            if s.op and s.arr in self.const_arrays:
                pass
        elif isinstance(s, For):
            if s.rng.start is not None:
                lo0 = self.irange(s.rng.start, sc)
            else:
                lo0 = (0, 0)
            stop = self.irange(s.rng.stop, sc)
            if s.rng.step == 1:
                r = (lo0[0], stop[1] - 1)
            elif s.rng.step > 1:
                r = (lo0[0], stop[1] - 1)
            else:                      # counting down from start to stop (exclusive)
                r = (stop[0] + 1, lo0[1])
            if s.var in sc.floats or s.var in sc.arrays:
                raise Invalid("loop var name clash")
            inner = _Scope(set(sc.floats), dict(sc.ints), dict(sc.arrays), True)
            inner.ints[s.var] = r
            self.block(s.body, inner, helpers, kernel)
        elif isinstance(s, While):
            if s.cond is not None:
                self.fexpr(s.cond, sc, helpers)
            inner = _Scope(set(sc.floats), dict(sc.ints), dict(sc.arrays), True)
            inner.ints[s.counter] = (0, max(0, s.bound - 1))
            self.block(s.body, inner, helpers, kernel)
        elif isinstance(s, If):
            self.fexpr(s.cond, sc, helpers)
            self.block(s.body, sc, helpers, kernel)
            self.block(s.orelse, sc, helpers, kernel)
        elif isinstance(s, Break):
            if not sc.in_loop:
                raise Invalid("break outside a loop")
        elif isinstance(s, Return):
            if not kernel or not self.prog.returns:
                raise Invalid("return not allowed")
            self.fexpr(s.expr, sc, helpers)
        elif isinstance(s, CallStmt):
            self.fexpr(s.call, sc, helpers)
            if s.name:
                if s.name in sc.ints or s.name in sc.arrays:
                    raise Invalid("assign to int/array name")
                sc.floats.add(s.name)
        elif isinstance(s, Temp):
            if not kernel:
                raise Invalid("temp in helper")
            if s.ctor == "empty" and s.fill is None:
                raise Invalid("uninitialised temporary")
            if s.fill is not None:
                inner = _Scope(set(sc.floats), dict(sc.ints), dict(sc.arrays), sc.in_loop)
                for v, d in zip(s.fill_vars, s.dims):
                    inner.ints[v] = (0, self.prog.sizes[d] - 1)
                self.fexpr(s.fill, inner, helpers)
            sc.arrays[s.name] = tuple(s.dims)
        elif isinstance(s, Raise):
            self.fexpr(s.cond, sc, helpers)
        else:
            raise Invalid(f"unknown statement {type(s).__name__}")


def _helper_index_dim(h: Helper, pname: str) -> str:
    """The size label an int index parameter of an array helper indexes (its first array)."""
    for n, kind in h.params:
        if kind.startswith("arr:"):
            return kind[4:]
    raise Invalid("index parameter without an array")


def validate(prog: Program) -> None:
    Validator(prog).run()


def is_valid(prog: Program) -> bool:
    try:
        validate(prog)
        return True
    except Invalid:
        return False
