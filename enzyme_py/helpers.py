"""The helpers users reach for, on top of `autodiff`: gradient, value_and_grad, jvp, vjp,
jacobian, hessian_vector_product, hessian, `@differentiable`, and njit-callable entries.

Kernels come in two shapes:
- returning: `f(*args)` returns a float (gradient, value_and_grad, hvp: a scalar loss; with
  `has_aux=True`, a tuple (loss, aux)), or an array (jvp, vjp, jacobian);
- output: `f(x, out, *const)` writes an output array `out` (pass `out=` to the helper).

The helpers take plain values. `argnums` (an int or a tuple of ints, JAX's convention; default
0) picks the differentiated positional arguments: a float array, a float, a tuple of float
arrays or a tuple of floats each (a list is converted to a float64 array); the others, and
keyword arguments, are passed as they are (Const). With a tuple `argnums`, derivatives come back
as a tuple, one per argument. Every derivative comes from enzyme_py's reverse or forward mode on
the kernel's IR; none from finite differences.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np
from numba.core import types

from .annotations import Active, BatchDuplicated, Const, Duplicated, Forward, ForwardWithPrimal
from .api import autodiff, compile_gradient, refuse_structured_return
from .arguments import copy_same_layout, zeros_like_layout
from .bridge.frozen import as_dispatcher
from .errors import UnsupportedError
from .modes import bound as run
from .modes.calls import bind
from .modes.forward import MAX_WIDTH, compile_forward
from .modes.hvp import products
from .modes.split import augmented_forward, takes
from .options import AUTODIFF_OPTIONS, kernel_options, unchecked
from .sparse import SparseHessian, SparseJacobian

__all__ = ["gradient", "value_and_grad", "jvp", "vjp", "jacobian", "hessian_vector_product",
           "hessian", "differentiable", "gradient_entry", "forward_entry"]


_autodiff = autodiff.__wrapped__     # helpers check their keywords themselves (options.py)


def _is_array(x) -> bool:
    return isinstance(x, np.ndarray)


def _filled(x, values):
    """An array with x's shape, dtype and strides holding `values` (a tangent or direction)."""
    out = zeros_like_layout(x)
    out[...] = np.asarray(values, dtype=x.dtype).reshape(x.shape)
    return out


def _consts(const):
    return [c if isinstance(c, Const) else Const(c) for c in const]


# ---- the differentiated arguments -----------------------------------------------------------

def _argnums(argnums, nargs) -> tuple:
    many = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if many else (argnums,)
    out = []
    for n in nums:
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(f"argnums must be an int or a tuple of ints, not {argnums!r}")
        if not -nargs <= n < nargs:
            raise ValueError(f"argnums {n} is out of range for {nargs} positional arguments")
        out.append(int(n) % nargs)
    if len(set(out)) != len(out):
        raise ValueError(f"argnums {argnums!r} repeats an argument")
    return tuple(out)


def as_input(x: Any, where: str = "argument") -> Any:
    """A differentiated plain input: a list becomes a float64 array; an integer is refused."""
    if isinstance(x, list):
        try:
            return np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{where}: a list to differentiate must hold numbers (it becomes a "
                            f"float64 array); pass a NumPy array") from None
    if isinstance(x, tuple):
        return tuple(as_input(v, where) for v in x)
    if isinstance(x, (bool, np.bool_, int, np.integer)):
        raise TypeError(f"{where} is an integer ({x!r}): integers carry no derivative; pass a "
                        f"float, or leave it out of argnums")
    if _is_array(x) and x.dtype.kind not in "fc":
        raise TypeError(f"{where} is an array of dtype {x.dtype}: only float (real or complex) "
                        f"arrays are differentiated; pass x.astype(np.float64), or leave it out "
                        f"of argnums")
    return x


def _kind(x, where) -> str:
    if _is_array(x):
        return "array"
    if isinstance(x, (float, np.floating)):
        return "float"
    if isinstance(x, tuple) and x and all(_is_array(v) for v in x):
        return "arrays"
    if isinstance(x, tuple) and x and all(isinstance(v, (float, np.floating)) for v in x):
        return "floats"
    raise TypeError(f"{where}: enzyme_py differentiates a float array, a float, or a tuple of "
                    f"float arrays or of floats, not {type(x).__name__}")


def _annotate(args, nums, copy=False):
    """(annotated positional arguments, per argnum a reader of its derivative)."""
    anns = list(args)
    readers = []
    for n in nums:
        where = f"argument {n}"
        x = as_input(args[n], where)
        kind = _kind(x, where)
        if kind == "array":
            dx = zeros_like_layout(x)
            anns[n] = Duplicated(copy_same_layout(x) if copy else x, dx)
            readers.append(lambda res, dx=dx: dx)
        elif kind == "arrays":
            dxs = tuple(zeros_like_layout(v) for v in x)
            anns[n] = Duplicated(tuple(copy_same_layout(v) for v in x) if copy else x, dxs)
            readers.append(lambda res, dxs=dxs: dxs)
        else:
            anns[n] = Active(x)
            readers.append(lambda res, n=n: res[n])
    return anns, readers


def _pick(readers, result, many):
    grads = tuple(r(result) for r in readers)
    return grads if many else grads[0]


def _bound(f, anns, kwargs):
    return bind(as_dispatcher(f), tuple(anns), kwargs)


# ---- gradient, value_and_grad -----------------------------------------------------------------

@kernel_options()
def gradient(f: Callable, *args: Any, argnums: Any = 0, has_aux: bool = False, **kwargs: Any) -> Any:
    """df/d(args[argnums]) of a kernel returning a float: like the argument (an array like x, a
    float for a float); a tuple for a tuple `argnums`. With `has_aux` the kernel returns
    (loss, aux) and the result is (gradient, aux)."""
    (value, grad) = value_and_grad(f, argnums=argnums, has_aux=has_aux)(*args, **kwargs)
    return (grad, value[1]) if has_aux else grad


def value_and_grad(f: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """A function (*args, **kwargs) -> (f(*args, **kwargs), df/d(args[argnums])), one
    reverse-mode call each time (ReverseWithPrimal: the gradient also returns the value).

    f returns a float (JAX's grad also wants a scalar: use vjp or jacobian for an array
    return); with `has_aux=True` it returns (loss, aux), aux carrying no derivative, and the
    value is that tuple. The function can be pickled (for process pools) when `f` can."""
    return ValueAndGrad(f, argnums, has_aux)


class ValueAndGrad:
    """What `value_and_grad` returns: a picklable callable (it holds the kernel, which Numba
    pickles by reference; a worker loads the gradient from the disk cache when one is set)."""

    def __init__(self, f, argnums=0, has_aux=False):
        self.f, self.argnums, self.has_aux = f, argnums, has_aux
        functools.update_wrapper(self, getattr(f, "py_func", f))

    def __call__(self, *args, **kwargs):
        nums = _argnums(self.argnums, len(args))
        anns, readers = _annotate(args, nums)
        bound = _bound(self.f, anns, kwargs)
        _check_loss(bound.plan, self.has_aux)
        result, value = run.reverse(bound, (1.0, None) if self.has_aux else 1.0, "auto", True)
        return value, _pick(readers, result, isinstance(self.argnums, (tuple, list)))

    def __getstate__(self):
        # update_wrapper's __wrapped__ is the kernel's Python function: pickled with the kernel
        return {"f": self.f, "argnums": self.argnums, "has_aux": self.has_aux}

    def __setstate__(self, state):
        self.__init__(state["f"], state["argnums"], state["has_aux"])


def _check_loss(plan, has_aux):
    restype = plan.returns.restype
    if has_aux:
        if isinstance(restype, types.BaseTuple) and len(restype) == 2 and \
                isinstance(restype.types[0], types.Float):
            return
        raise TypeError(f"has_aux=True: {plan.name} must return a tuple (loss, aux) with a "
                        f"float loss, not {restype}")
    if plan.returns.kind != "float":
        raise TypeError(f"gradient and value_and_grad differentiate a kernel returning a float "
                        f"(a scalar loss); {plan.name} returns {restype}. Use vjp (a pullback of "
                        f"the returned value) or jacobian, or has_aux=True for (loss, aux)")


# ---- jvp, vjp ---------------------------------------------------------------------------------

@kernel_options(1, also=AUTODIFF_OPTIONS)
def jvp(f: Callable, x: Any, v: Any, *const: Any, out: np.ndarray | None = None, argnums: Any = 0,
        **kwargs: Any) -> tuple:
    """Forward mode: (value, J v).

    The primal arguments are (x, *const); `v` is the tangent of args[argnums] (a tuple of
    tangents for a tuple `argnums`). Returning kernel: (f(x, *const), its tangent: a float
    for a float return, an array for an array return, a tuple for a tuple). With `out`: the
    kernel is f(x, out, *const); returns (out, dout), dout = d(out) . v."""
    args = (x,) + tuple(const)
    many = isinstance(argnums, (tuple, list))
    nums = _argnums(argnums, len(args))
    vs = tuple(v) if many else (v,)
    if len(vs) != len(nums):
        raise ValueError(f"jvp: {len(nums)} arguments differentiated, {len(vs)} tangents")
    anns = list(args)
    for n, t in zip(nums, vs):
        anns[n] = _with_tangent(as_input(args[n], f"argument {n}"), t, f"argument {n}")
    if out is None:
        tangent, value = _autodiff(f, *anns, mode=ForwardWithPrimal, **kwargs)
        return value, tangent
    dout = zeros_like_layout(out)
    anns.insert(1, Duplicated(out, dout))
    _autodiff(f, *anns, mode=Forward, **kwargs)
    return out, dout


def _with_tangent(x, t, where):
    kind = _kind(x, where)
    if kind == "array":
        return Duplicated(copy_same_layout(x), _filled(x, as_input(t, where)))
    if kind == "arrays":
        return Duplicated(tuple(copy_same_layout(a) for a in x),
                          tuple(_filled(a, u) for a, u in zip(x, t)))
    if kind == "floats":
        return Active(x, tuple(float(u) for u in t))
    return Active(x, float(t))


@kernel_options(also=AUTODIFF_OPTIONS)
def vjp(f: Callable, x: Any, *const: Any, out: np.ndarray | None = None, argnums: Any = 0,
        **kwargs: Any) -> tuple:
    """Reverse mode: (value, pullback) with pullback(w) = J^T w.

    Returning kernel: value = f(x, *const) (a float, an array or a tuple) and pullback(w) takes
    a seed of the value's structure (a float, an array of its shape, a tuple). With `out`: the
    kernel is f(x, out, *const), value is the output array, pullback(w) takes an array like out.
    The derivative is w.r.t. args[argnums] of args = (x, *const) (a tuple of them for a tuple
    `argnums`). With `out`, the kernel runs once, through split mode's augmented forward sweep,
    and every pullback call runs the reverse sweep from its tape (modes/split.py; a call split
    mode does not take, with keywords or tuples, runs the kernel on copies of the initial arguments
    per pullback). Without `out`, every pullback call runs on copies of the initial arguments."""
    args = (x,) + tuple(const)
    many = isinstance(argnums, (tuple, list))
    nums = _argnums(argnums, len(args))
    args = tuple(as_input(a, f"argument {n}") if n in nums else a for n, a in enumerate(args))
    if out is None:
        anns, _ = _annotate(args, nums)
        if _bound(f, anns, kwargs).plan.returns.kind == "float":
            value, g = value_and_grad(f, argnums=argnums)(*args, **kwargs)
            return value, (lambda w: tuple(w * gi for gi in g) if many else w * g)
        value = f(*_copies(args), **kwargs)

        def pullback(w):
            anns, readers = _annotate(_copies(args), nums)
            return _pick(readers, _autodiff(f, *anns, seed=w, **kwargs), many)
        return value, pullback
    split = None if kwargs else _split_pullback(f, args, nums, out, many)
    if split is not None:
        return split
    out0 = np.array(out, copy=True)
    y = np.array(out, copy=True)
    f(*_copies(args[:1]), y, *_copies(args[1:]), **kwargs)

    def pullback_out(w):
        dy = np.array(w, dtype=out.dtype, copy=True).reshape(out.shape)
        anns, readers = _annotate(_copies(args), nums)
        anns.insert(1, Duplicated(copy_same_layout(out0), dy))
        result = _autodiff(f, *anns, **kwargs)
        return _pick(readers, result[:1] + result[2:], many)
    return y, pullback_out


def _split_pullback(f, args, nums, out, many):
    """vjp with `out` by split mode: the kernel runs once (augmented_forward, on copies) and each
    pullback runs the reverse sweep from its tape. None when split mode does not take the call."""
    anns, readers = _annotate(_copies(args), nums)
    y, dy = copy_same_layout(np.asarray(out)), zeros_like_layout(np.asarray(out))
    anns.insert(1, Duplicated(y, dy))
    if not takes(f, anns):
        return None
    try:
        _, tape = augmented_forward(f, *anns)
    except (UnsupportedError, NotImplementedError):     # prange, recursion: reverse mode per call
        return None
    shadows = [a.shadow for a in anns if isinstance(a, Duplicated) and a.shadow is not dy]

    def pullback(w):
        for s in shadows:
            s[...] = 0.0
        dy[...] = np.asarray(w, dtype=out.dtype).reshape(out.shape)
        result = tape.reverse()
        grads = tuple(np.copy(g) if isinstance(g, np.ndarray) else g
                      for g in (r(result[:1] + result[2:]) for r in readers))
        return grads if many else grads[0]
    return y, pullback


def _copies(args):
    return tuple(copy_same_layout(a) if _is_array(a) else
                 tuple(copy_same_layout(v) if _is_array(v) else v for v in a) if isinstance(a, tuple)
                 else a for a in args)


# ---- jacobian ---------------------------------------------------------------------------------

@kernel_options(also=AUTODIFF_OPTIONS)
def jacobian(f: Callable, x: Any, *const: Any, out: np.ndarray | None = None, mode: str | None = None,
             argnums: Any = 0, sparse: bool = False, **kwargs: Any) -> Any:
    """The Jacobian of the kernel's output w.r.t. args[argnums] (args = (x, *const)): shape
    output.shape + argument.shape (a tuple of them for a tuple `argnums`).

    The output is the array the kernel returns, or `out` for a kernel f(x, out, *const) that
    writes it. mode="forward": columns by forward mode, up to 16 directions per call
    (BatchDuplicated); mode="reverse": rows by reverse mode, up to 16 seeds per call (batched
    reverse); None: forward. sparse=True: a scipy.sparse.csr_matrix of shape (output.size,
    argument.size) from the sparsity pattern and a column colouring (forward sweeps) or a row
    colouring (reverse sweeps; mode None chooses, SparseJacobian's), one int `argnums`, the
    argument a float array; enzyme_py.SparseJacobian keeps the pattern across calls:
    docs/sparse.md)."""
    if mode not in (None, "forward", "reverse"):
        raise ValueError(f"mode must be 'forward' or 'reverse', not {mode!r}")
    if sparse:
        if isinstance(argnums, (tuple, list)):
            raise ValueError("jacobian(..., sparse=True) takes one int argnums")
        return SparseJacobian(f, argnums, mode=mode)(x, *const, out=out, **kwargs)
    mode = mode or "forward"
    args = (x,) + tuple(const)
    many = isinstance(argnums, (tuple, list))
    nums = _argnums(argnums, len(args))
    args = tuple(as_input(a, f"argument {n}") if n in nums else a for n, a in enumerate(args))
    for n in nums:
        if _is_array(args[n]) and args[n].dtype.kind == "c":
            raise TypeError(f"jacobian: argument {n} is complex; jacobian takes real arrays "
                            f"(use vjp / jvp, or pass the real and imaginary parts)")
    for n in nums:
        if _kind(args[n], f"argument {n}") not in ("array", "float"):
            raise TypeError(f"jacobian: argument {n} must be a float array or a float; "
                            f"for a tuple, list its items in argnums separately")
    if out is not None:
        js = tuple(_jacobian_out(f, args, n, out, mode, kwargs) for n in nums)
    else:
        value = f(*_copies(args), **kwargs)
        if not (_is_array(value) and value.dtype.kind == "f") and \
                not isinstance(value, (float, np.floating)):
            raise TypeError(f"jacobian: the kernel returns {type(value).__name__}; jacobian "
                            f"takes a kernel returning a float array or a float (or writing "
                            f"out=); use vjp or jvp for a tuple return")
        js = tuple(_jacobian_return(f, args, n, np.shape(value), mode, kwargs) for n in nums)
    return js if many else js[0]


def _unit(shape, dtype, k):
    e = np.zeros(shape, dtype)
    if k is not None:
        e.flat[k] = 1.0
    return e


def _unit_like(x, k):
    """_unit with x's shape, dtype and strides (a shadow of x)."""
    e = zeros_like_layout(x)
    if k is not None:
        e.flat[k] = 1.0
    return e


def _jacobian_out(f, args, n, out, mode, kwargs):
    x = args[n]
    xshape = np.shape(x)
    m, size = out.size, int(np.prod(xshape))
    J = np.zeros((m, size), dtype=np.result_type(np.asarray(x).dtype, out.dtype))
    if mode == "forward":
        for cols in _chunks(size):
            dys = tuple(zeros_like_layout(out) for _ in range(MAX_WIDTH))
            anns = _lanes_forward(args, n, cols)
            anns.insert(1, BatchDuplicated(copy_same_layout(out), dys))
            _autodiff(f, *anns, mode=Forward, **kwargs)
            for d, i in zip(dys, cols):
                J[:, i] = d.ravel()
    else:
        for rows in _chunks(m):
            dys = tuple(_unit_like(out, rows[k] if k < len(rows) else None)
                        for k in range(MAX_WIDTH))
            anns, read = _lanes_reverse(args, n)
            anns.insert(1, BatchDuplicated(copy_same_layout(out), dys))
            result = _autodiff(f, *anns, **kwargs)
            for k, i in enumerate(rows):
                J[i] = np.ravel(read(result[:1] + result[2:], k))
    return J.reshape(out.shape + xshape)


def _jacobian_return(f, args, n, shape, mode, kwargs):
    x = args[n]
    xshape = np.shape(x)
    m, size = int(np.prod(shape)), int(np.prod(xshape))
    J = np.zeros((m, size), dtype=np.result_type(np.asarray(x).dtype, np.float64))
    if mode == "forward":
        for cols in _chunks(size):
            anns = _lanes_forward(args, n, cols)
            ts = run.forward(_bound(f, anns, kwargs), shapes=[shape if shape else None])
            for t, i in zip(ts, cols):
                J[:, i] = np.ravel(t)
    else:
        for rows in _chunks(m):
            seeds = [(_unit(shape, np.float64, rows[k] if k < len(rows) else None)
                      if shape else float(k < len(rows))) for k in range(MAX_WIDTH)]
            anns, read = _lanes_reverse(args, n)
            result = run.batched(_bound(f, anns, kwargs), seeds, MAX_WIDTH)
            for k, i in enumerate(rows):
                J[i] = np.ravel(read(result, k))
    return J.reshape(tuple(shape) + xshape)


def _chunks(n):
    return [list(range(s, min(s + MAX_WIDTH, n))) for s in range(0, n, MAX_WIDTH)]


def _lanes_forward(args, n, cols):
    """Arguments with args[n] carrying the unit directions `cols` (padded to 16 lanes)."""
    anns = [copy_same_layout(a) if _is_array(a) else a for a in args]
    x = args[n]
    if _is_array(x):
        anns[n] = BatchDuplicated(copy_same_layout(x), tuple(
            _unit_like(x, cols[k] if k < len(cols) else None) for k in range(MAX_WIDTH)))
    else:
        anns[n] = Active(x, tuple(float(k < len(cols)) for k in range(MAX_WIDTH)))
    return anns


def _lanes_reverse(args, n):
    """Arguments with args[n] receiving 16 lanes of derivatives, and a reader of lane k."""
    anns = [copy_same_layout(a) if _is_array(a) else a for a in args]
    x = args[n]
    if _is_array(x):
        dxs = tuple(zeros_like_layout(x) for _ in range(MAX_WIDTH))
        anns[n] = BatchDuplicated(copy_same_layout(x), dxs)
        return anns, (lambda result, k: dxs[k])
    anns[n] = Active(x)
    return anns, (lambda result, k: result[n][k])


@kernel_options(1, also=AUTODIFF_OPTIONS)
def hessian_vector_product(f: Callable, x: Any, v: Any, *const: Any, memory: Any = "tape",
                           **kwargs: Any) -> Any:
    """H v for a scalar kernel f(x, *const, **kwargs), by forward mode over the reverse-mode
    gradient (enzyme_py/hvp.py). v may be a tuple of up to 16 vectors: then a tuple of products,
    one call (a list is one vector). `memory`: as autodiff's, for the reverse gradient
    (docs/checkpointing.md: its time loops checkpointed under a budget)."""
    x = as_input(x, "x")
    many = isinstance(v, tuple)      # several vectors; a list is one vector
    vs = tuple(as_input(u, "v") for u in v) if many else (as_input(v, "v"),)
    consts = [getattr(a, "value", a) for a in const]
    hvs = products(f, x, [_filled(x, u) for u in vs], consts, kwargs, memory)
    return hvs if many else hvs[0]


@kernel_options(also=AUTODIFF_OPTIONS)
def hessian(f: Callable, x: Any, *const: Any, memory: Any = "tape", sparse: bool = False,
            **kwargs: Any) -> Any:
    """The Hessian of a scalar kernel f(x, *const): shape x.shape + x.shape, by batched
    Hessian-vector products (up to 16 columns per call); `memory` as hessian_vector_product's.
    sparse=True: a scipy.sparse.csr_matrix (x.size, x.size) from the sparsity pattern and a
    column colouring (enzyme_py.SparseHessian keeps them across calls: docs/sparse.md)."""
    if sparse:
        return SparseHessian(f, memory=memory)(as_input(x, "x"), *const, **kwargs)
    x = as_input(x, "x")
    n = x.size
    width = min(MAX_WIDTH, n)
    H = np.zeros((n, n), dtype=x.dtype)
    for start in range(0, n, width):
        cols = list(range(start, min(start + width, n)))
        es = []
        for k in range(width):
            e = zeros_like_layout(x)
            if k < len(cols):
                e.flat[cols[k]] = 1.0
            es.append(e)
        hvs = hessian_vector_product.__wrapped__(f, x, tuple(es), *const, memory=memory, **kwargs)
        for k, i in enumerate(cols):
            H[:, i] = hvs[k].ravel()
    return H.reshape(x.shape + x.shape)


class differentiable:
    """Decorator: keeps the kernel callable and adds `.grad`, `.value_and_grad`, `.jvp`,
    `.vjp`, `.jacobian`, `.hvp`, differentiating w.r.t. args[argnums].

        @differentiable
        @njit
        def loss(x, data): ...
        loss.grad(x, data)

        @differentiable(argnums=(0, 1))   # with options
        @njit
        def loss2(w, b, data): ...
    """

    def __new__(cls, f=None, *, argnums=0, has_aux=False):
        if f is None:
            return functools.partial(cls, argnums=argnums, has_aux=has_aux)
        return super().__new__(cls)

    def __init__(self, f, *, argnums=0, has_aux=False):
        self.kernel = as_dispatcher(f)
        self.argnums, self.has_aux = argnums, has_aux
        functools.update_wrapper(self, getattr(f, "py_func", f))

    def __reduce__(self):
        # pickled as the kernel (Numba pickles it by reference) and the options
        return _differentiable, (self.kernel, self.argnums, self.has_aux)

    def __call__(self, *args, **kwargs):
        return self.kernel(*args, **kwargs)

    def grad(self, *args, **kwargs):
        return unchecked(gradient, (self.kernel, *args), kwargs)(
            self.kernel, *args, argnums=self.argnums, has_aux=self.has_aux, **kwargs)

    def value_and_grad(self, *args, **kwargs):
        return value_and_grad(self.kernel, self.argnums, self.has_aux)(*args, **kwargs)

    def jvp(self, x, v, *const, **kwargs):
        return unchecked(jvp, (self.kernel, x, v, *const), kwargs)(
            self.kernel, x, v, *const, argnums=self.argnums, **kwargs)

    def vjp(self, x, *const, **kwargs):
        return unchecked(vjp, (self.kernel, x, *const), kwargs)(
            self.kernel, x, *const, argnums=self.argnums, **kwargs)

    def jacobian(self, x, *const, **kwargs):
        return unchecked(jacobian, (self.kernel, x, *const), kwargs)(
            self.kernel, x, *const, argnums=self.argnums, **kwargs)

    def hvp(self, x, v, *const, **kwargs):
        return hessian_vector_product(self.kernel, x, v, *const, **kwargs)


def _differentiable(kernel, argnums, has_aux):
    return differentiable(kernel, argnums=argnums, has_aux=has_aux)


def gradient_entry(kernel: Callable, *args: Any) -> Any:
    """The @njit-callable reverse-mode gradient for these annotated arguments (the same
    annotations as `autodiff`): entry(*primal_args, *shadows, seed) -> tuple of the Active
    arguments' derivatives; shadows (one per Duplicated argument, in order) receive the rest.
    Call it from other @njit code (for example an optimizer loop)."""
    return compile_gradient(kernel, *args).entry


def forward_entry(kernel: Callable, *args: Any) -> Any:
    """The @njit-callable forward-mode function: entry(*primal_args, *shadows, *tangents)
    -> (value, (t_1, ..., t_k)) (enzyme_py/forward.py)."""
    refuse_structured_return(kernel, args, "forward_entry")
    return compile_forward(kernel, *args).entry
