"""The helpers users reach for, on top of `autodiff`: gradient, value_and_grad, jvp, vjp,
jacobian, hessian_vector_product, hessian, `@differentiable`, and njit-callable entries.

Kernels come in two shapes:
- scalar: `f(x, *const)` returns a float;
- output: `f(x, out, *const)` writes an output array `out` (pass `out=` to the helper).

`x` is a float array (a float scalar where noted). Every derivative comes from enzyme_py's
reverse or forward mode on the kernel's IR; none from finite differences.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .annotations import Active, BatchDuplicated, Const, Duplicated, Forward
from .api import autodiff, compile_gradient
from .arguments import as_dispatcher
from .modes.forward import MAX_WIDTH, compile_forward, forward_with_primal
from .modes.hvp import compile_hvp
from .modes.value_grad import value_and_gradient

__all__ = ["gradient", "value_and_grad", "jvp", "vjp", "jacobian", "hessian_vector_product",
           "hessian", "differentiable", "gradient_entry", "forward_entry"]


def _is_array(x) -> bool:
    return isinstance(x, np.ndarray)


def _consts(const):
    return [c if isinstance(c, Const) else Const(c) for c in const]


def gradient(f: Callable, x: Any, *const: Any) -> Any:
    """df/dx of a scalar kernel f(x, *const): an array like x (or a float for a float x)."""
    return value_and_grad(f)(x, *const)[1]


def value_and_grad(f: Callable) -> Callable:
    """A function (x, *const) -> (f(x, *const), df/dx), one reverse-mode call each time
    (the gradient entry also returns the primal value)."""
    @functools.wraps(getattr(f, "py_func", f))
    def vg(x, *const):
        return value_and_gradient(f, x, *const)
    return vg


def jvp(f: Callable, x: Any, v: Any, *const: Any, out: np.ndarray | None = None) -> tuple:
    """Forward mode: (value, J v).

    Scalar kernel: (f(x), the directional derivative df.v) (x an array or a float).
    With `out`: the kernel is f(x, out, *const); returns (out, dout), dout = d(out)/dx . v."""
    if out is None:
        if _is_array(x):
            value, (t,) = forward_with_primal(f, Duplicated(x.copy(), np.array(v, dtype=x.dtype)),
                                              *_consts(const))
        else:
            value, (t,) = forward_with_primal(f, Active(float(x), float(v)), *_consts(const))
        return value, t
    dout = np.zeros_like(out)
    forward_with_primal(f, _dup_or_active(x, v), Duplicated(out, dout), *_consts(const))
    return out, dout


def _dup_or_active(x, v):
    if _is_array(x):
        return Duplicated(x.copy(), np.array(v, dtype=x.dtype))
    return Active(float(x), float(v))


def vjp(f: Callable, x: Any, *const: Any, out: np.ndarray | None = None) -> tuple:
    """Reverse mode: (value, pullback) with pullback(w) = J^T w.

    Scalar kernel: value = f(x), pullback(w) = w * df/dx. With `out`: the kernel is
    f(x, out, *const), value is the output array, pullback(w) takes an array like out."""
    if out is None:
        value, g = value_and_grad(f)(x, *const)
        return value, (lambda w: w * g)
    out0 = np.array(out, copy=True)
    y = np.array(out, copy=True)
    f(x.copy() if _is_array(x) else x, y, *const)

    def pullback(w):
        dy = np.array(w, dtype=out.dtype, copy=True).reshape(out.shape)
        yy = out0.copy()
        if _is_array(x):
            dx = np.zeros_like(x)
            autodiff(f, Duplicated(x.copy(), dx), Duplicated(yy, dy), *_consts(const))
            return dx
        return autodiff(f, Active(float(x)), Duplicated(yy, dy), *_consts(const))[0]
    return y, pullback


def jacobian(f: Callable, x: np.ndarray, *const: Any, out: np.ndarray, mode: str = "forward") -> np.ndarray:
    """d(out)/dx for a kernel f(x, out, *const) that writes `out`: an array of shape
    out.shape + x.shape.

    mode="forward": columns by forward mode, up to 16 directions per call (BatchDuplicated);
    mode="reverse": rows by reverse mode, up to 16 seeds per call (batched reverse)."""
    if mode == "forward":
        return _jacobian_forward(f, x, out, const)
    if mode == "reverse":
        return _jacobian_reverse(f, x, out, const)
    raise ValueError(f"mode must be 'forward' or 'reverse', not {mode!r}")


def _jacobian_forward(f, x, out, const):
    n, m = x.size, out.size
    width = min(MAX_WIDTH, n)
    J = np.zeros((m, n), dtype=np.result_type(x.dtype, out.dtype))
    y = np.zeros_like(out)
    for start in range(0, n, width):
        cols = range(start, min(start + width, n))
        dxs = tuple(np.zeros_like(x) for _ in range(width))   # padded with zero directions
        for d, i in zip(dxs, cols):
            d.flat[i] = 1.0
        dys = tuple(np.zeros_like(out) for _ in range(width))
        y[...] = out
        autodiff_forward(f, BatchDuplicated(x.copy(), dxs), BatchDuplicated(y, dys), *_consts(const))
        for d, i in zip(dys, cols):
            J[:, i] = d.ravel()
    return J.reshape(out.shape + x.shape)


def autodiff_forward(f, *args):
    return autodiff(f, *args, mode=Forward)


def _jacobian_reverse(f, x, out, const):
    n, m = x.size, out.size
    width = min(MAX_WIDTH, m)
    J = np.zeros((m, n), dtype=np.result_type(x.dtype, out.dtype))
    for start in range(0, m, width):
        rows = range(start, min(start + width, m))
        dys = tuple(np.zeros_like(out) for _ in range(width))   # padded with zero seeds
        for d, i in zip(dys, rows):
            d.flat[i] = 1.0
        dxs = tuple(np.zeros_like(x) for _ in range(width))
        autodiff(f, BatchDuplicated(x.copy(), dxs), BatchDuplicated(np.array(out, copy=True), dys),
                 *_consts(const))
        for d, i in zip(dxs, rows):
            J[i] = d.ravel()
    return J.reshape(out.shape + x.shape)


def hessian_vector_product(f: Callable, x: np.ndarray, v: Any, *const: Any) -> Any:
    """H v for a scalar kernel f(x, *const), by forward mode over the reverse-mode gradient
    (enzyme_py/modes/hvp.py). v may be a tuple of up to 16 vectors: then a tuple of products,
    one call."""
    vs = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    c = compile_hvp(f, x, *[getattr(a, "value", a) for a in const], width=len(vs))
    gx = np.zeros_like(x)
    hvs = tuple(np.zeros_like(x) for _ in vs)
    c.entry(x.copy(), *[getattr(a, "value", a) for a in const], 1.0, gx,
            *[np.array(u, dtype=x.dtype).reshape(x.shape) for u in vs], *hvs)
    return hvs if isinstance(v, (tuple, list)) else hvs[0]


def hessian(f: Callable, x: np.ndarray, *const: Any) -> np.ndarray:
    """The Hessian of a scalar kernel f(x, *const): shape x.shape + x.shape, by batched
    Hessian-vector products (up to 16 columns per call)."""
    n = x.size
    width = min(MAX_WIDTH, n)
    H = np.zeros((n, n), dtype=x.dtype)
    for start in range(0, n, width):
        cols = list(range(start, min(start + width, n)))
        es = []
        for k in range(width):
            e = np.zeros_like(x)
            if k < len(cols):
                e.flat[cols[k]] = 1.0
            es.append(e)
        hvs = hessian_vector_product(f, x, tuple(es), *const)
        for k, i in enumerate(cols):
            H[:, i] = hvs[k].ravel()
    return H.reshape(x.shape + x.shape)


class differentiable:
    """Decorator: keeps the kernel callable and adds `.grad`, `.value_and_grad`, `.jvp`,
    `.hvp` (scalar kernels f(x, *const)).

        @differentiable
        @njit
        def loss(x, data): ...
        loss.grad(x, data)
    """

    def __init__(self, f):
        self.kernel = as_dispatcher(f)
        functools.update_wrapper(self, getattr(f, "py_func", f))

    def __call__(self, *args):
        return self.kernel(*args)

    def grad(self, x, *const):
        return gradient(self.kernel, x, *const)

    def value_and_grad(self, x, *const):
        return value_and_grad(self.kernel)(x, *const)

    def jvp(self, x, v, *const):
        return jvp(self.kernel, x, v, *const)

    def hvp(self, x, v, *const):
        return hessian_vector_product(self.kernel, x, v, *const)


def gradient_entry(kernel: Callable, *args: Any) -> Any:
    """The @njit-callable reverse-mode gradient for these annotated arguments (the same
    annotations as `autodiff`): entry(*primal_args, *shadows, seed) -> tuple of the Active
    arguments' derivatives; shadows (one per Duplicated argument, in order) receive the rest.
    Call it from other @njit code (for example an optimizer loop)."""
    return compile_gradient(kernel, *args).entry


def forward_entry(kernel: Callable, *args: Any) -> Any:
    """The @njit-callable forward-mode function: entry(*primal_args, *shadows, *tangents)
    -> (value, (t_1, ..., t_k)) (enzyme_py/modes/forward.py)."""
    return compile_forward(kernel, *args).entry
