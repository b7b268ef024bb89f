"""A Numba kernel as a PyTorch operator (the optional `torch` extra; docs/frameworks.md).

    heat_op = enzyme_py.torch.kernel_op(heat, ["inout", "in", int])
    u = heat_op(u0, alpha, 100)          # u0 and alpha tensors; u0 is not changed

`kernel_op(kernel, params)` describes each kernel parameter:
- "in": a differentiable float tensor the kernel reads (a 0-d tensor is passed as a float,
  Active);
- "inout": a differentiable float tensor the kernel overwrites: the op copies it, runs the
  kernel on the copy and returns the copy;
- Out(like=k) or Out(shape=fn, dtype=...): an array the kernel writes, not passed by the caller:
  the op allocates it (zeros) and returns it;
- "const": a tensor not differentiated; int, float or bool: a Python number (Const).
With returns=True the kernel's float return value is an output too (a 0-d tensor, last).

The op is a `torch.library.custom_op` (one opaque node for torch.compile, a fake
implementation giving the outputs' shapes). Its backward runs split mode's reverse sweep from
the tape the forward call kept (modes/split.py): the kernel is not run again. The backward is
itself an op whose derivative (double backward) is forward mode over the reverse-mode gradient;
the forward-mode rule (torch.func.jvp) is enzyme_py's forward mode. vmap of the backward over
output seeds only (jacrev) is one batched reverse-mode call, of the forward-mode rule over
tangents only (jacfwd) one forward-mode call with k directions; other vmaps loop over the batch.
CPU tensors reach the kernel as NumPy views of their memory (no copy when contiguous).
"""
from __future__ import annotations

import itertools
from collections import Counter
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
import torch
from numba import njit

from .annotations import Active, BatchDuplicated, Const, Duplicated, Forward
from .api import autodiff
from .bridge.frozen import as_dispatcher
from .errors import UnsupportedError
from .lanes import ACTIVE, CONST as CONST_ARG, DUP, BatchedReverse
from .modes.split import augmented_forward

__all__ = ["Out", "KernelOp", "kernel_op"]

_SCALARS = {int: "int", float: "float", bool: "bool"}
_ids = itertools.count()
_tapes: "weakref.WeakValueDictionary[int, _Holder]" = weakref.WeakValueDictionary()
_lock = threading.Lock()


@dataclass(frozen=True)
class Out:
    """An output array the kernel writes: shaped like parameter `like`, or `shape(*args)` of the
    op's arguments (the caller's, in order) with `dtype` (default float64)."""
    like: Optional[int] = None
    shape: Optional[Callable] = None
    dtype: Any = None


class _Holder(bytearray):
    """The handle tensor's memory: holds the Tape, so the tape lives as long as the tensor."""


def kernel_op(kernel, params, returns: bool = False, name: Optional[str] = None,
              backward: str = "tape") -> "KernelOp":
    """Register `kernel` (@njit) as a torch operator; `params` describes each kernel parameter
    (the module docstring). Returns a KernelOp: call it with the tensors and numbers of the
    parameters that are not Out, in order.

    backward="tape": the forward call runs split mode's augmented forward sweep and keeps its
    tape; the backward runs the reverse sweep from it (the kernel runs once). "rerun": the
    forward call is a plain call and the backward runs reverse mode (`autodiff`) on the saved
    inputs, the kernel's forward sweep again: faster where split mode's tape is large (it
    tapes every value the reverse sweep needs, docs/frameworks.md)."""
    if backward not in ("tape", "rerun"):
        raise ValueError(f"backward must be 'tape' or 'rerun', not {backward!r}")
    return KernelOp(kernel, params, returns, name, backward)


class KernelOp:
    """The operator for one kernel: `op(*args)` returns the outputs (a tensor, or a tuple of
    them): the Out and "inout" arrays in parameter order, then the return value."""

    def __init__(self, kernel, params, returns, name, backward="tape"):
        self.kernel = as_dispatcher(kernel)
        self.backward = backward
        self.params = tuple(_check_param(i, p) for i, p in enumerate(params))
        self.returns = returns
        self.inputs = [i for i, p in enumerate(self.params) if not isinstance(p, Out)]
        self.diff = [i for i in self.inputs if self.params[i] in ("in", "inout")]
        self.outs = [i for i, p in enumerate(self.params) if isinstance(p, Out) or p == "inout"]
        if not self.diff or not self.n_outputs:
            raise ValueError("kernel_op needs an 'in' or 'inout' parameter and an output (Out, "
                             "'inout' or returns=True)")
        qual = f"enzyme_py::{name or self.kernel.__name__}_{next(_ids)}"
        self._nested = {}
        self.lanes = True           # batches as k lanes; False: a loop (batched reverse refused)
        self.batched = BatchedReverse(self.kernel)
        self.calls = Counter()      # batched calls: "vjp_lanes", "jvp_lanes"
        self._define(qual)

    # ---- the ops ------------------------------------------------------------------------------

    def _define(self, qual):
        ins = ", ".join(f"{_schema_type(self.params[i])} a{i}" for i in self.inputs)
        douts = ", ".join(f"Tensor g{k}" for k in range(self.n_outputs))
        dins = ", ".join(f"Tensor u{i}" for i in self.diff)
        outs = self._tensors(self.n_outputs)
        lib = torch.library
        self.primal = lib.custom_op(qual, self._primal, mutates_args=(), schema=f"({ins}) -> {outs}")
        self.aug = lib.custom_op(qual + "_aug", self._aug, mutates_args=(),
                                 schema=f"({ins}) -> {self._tensors(self.n_outputs + 1)}")
        self.vjp = lib.custom_op(qual + "_vjp", self._vjp, mutates_args=(),
                                 schema=f"(Tensor handle, {ins}, {douts}) -> {self._tensors(len(self.diff))}")
        self.vjp2 = lib.custom_op(qual + "_vjp2", self._vjp2, mutates_args=(),
                                  schema=f"({ins}, {douts}, {dins}) -> "
                                         f"{self._tensors(len(self.diff) + self.n_outputs)}")
        self.primal.register_fake(lambda *a: _single(self._fake_outputs(a)))
        self.aug.register_fake(lambda *a: tuple(self._fake_outputs(a)) + (_fake_handle(a),))
        self.vjp.register_fake(lambda h, *a: _single(self._fake_grads(a)))
        self.vjp2.register_fake(lambda *a: tuple(self._fake_grads(a) + self._fake_outputs(a)))
        # torch.compile's path (Dynamo takes no autograd.Function with a jvp): the ops' own
        # autograd; eager calls and torch.func go through self.function
        self.aug.register_autograd(self._aug_backward, setup_context=self._aug_setup)
        self.vjp.register_autograd(self._vjp_backward, setup_context=self._vjp_setup)
        self.vjp2.register_autograd(_third_order)
        self.jvp = lib.custom_op(qual + "_jvp", self._jvp_impl, mutates_args=(),
                                 schema=f"({ins}, {dins}) -> {outs}")
        self.jvp.register_fake(lambda *a: _single(self._fake_outputs(a)))
        for op in (self.primal, self.aug, self.vjp2):
            op.register_vmap(_loop_vmap(op))
        self.vjp.register_vmap(self._lanes_vmap(self.vjp, self._vjp_lanes, 1))
        self.jvp.register_vmap(self._lanes_vmap(self.jvp, self._jvp_lanes, 0))
        self.function = self._function()

    def _function(self):
        """The autograd.Function torch.func transforms see: the aug op forward, the vjp op
        backward, the jvp op as its forward-mode rule, vmap by the ops' loops."""
        op = self

        class KernelFunction(torch.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(*args):
                return op.aug(*args)

            @staticmethod
            def setup_context(ctx, inputs, output):
                op._aug_setup(ctx, inputs, output)
                ctx.save_for_forward(*[t for t in inputs if isinstance(t, torch.Tensor)])
                ctx.mark_non_differentiable(output[-1])

            @staticmethod
            def backward(ctx, *grads):
                return op._aug_backward(ctx, *grads, vjp=op.vjp_function.apply)

            @staticmethod
            def jvp(ctx, *tangents):
                inputs = op._restore(ctx, ctx.saved_tensors)     # save_for_forward's
                ts = [tangents[k] if tangents[k] is not None else torch.zeros_like(inputs[k])
                      for k, i in enumerate(op.inputs) if i in op.diff]
                outs = op.jvp(*inputs, *ts)
                return tuple(outs if isinstance(outs, (tuple, list)) else (outs,)) + (None,)

        class VjpFunction(torch.autograd.Function):
            """The backward as a differentiable function (double backward)."""
            generate_vmap_rule = True

            @staticmethod
            def forward(*args):
                return op.vjp(*args)

            @staticmethod
            def setup_context(ctx, inputs, output):
                op._vjp_setup(ctx, inputs, output)

            @staticmethod
            def backward(ctx, *grads):
                return op._vjp_backward(ctx, *grads)

        name = self.kernel.__name__
        KernelFunction.__name__ = KernelFunction.__qualname__ = f"{name}Function"
        VjpFunction.__name__ = VjpFunction.__qualname__ = f"{name}VjpFunction"
        self.vjp_function = VjpFunction
        return KernelFunction

    @property
    def n_outputs(self) -> int:
        return len(self.outs) + bool(self.returns)

    @staticmethod
    def _tensors(n):
        return "Tensor" if n == 1 else "(" + ", ".join(["Tensor"] * n) + ")"

    def __call__(self, *args):
        if len(args) != len(self.inputs):
            raise TypeError(f"{self.kernel.__name__} op takes {len(self.inputs)} arguments "
                            f"(the parameters that are not Out), not {len(args)}")
        wants_grad = torch.is_grad_enabled() and any(
            isinstance(args[k], torch.Tensor) and args[k].requires_grad
            for k, i in enumerate(self.inputs) if i in self.diff)
        if torch.compiler.is_compiling():
            outs = self.aug(*args)[:-1] if wants_grad else self.primal(*args)
        elif wants_grad or _transformed(args):
            outs = self.function.apply(*args)[:-1]
        else:
            outs = self.primal(*args)
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        return outs[0] if len(outs) == 1 else tuple(outs)

    # ---- implementations ----------------------------------------------------------------------

    def _bind(self, args):
        """{param: tensor or number} for the op's arguments, the Out and "inout" arrays
        allocated (an "inout" array a copy)."""
        bound = dict(zip(self.inputs, args))
        for i in self.inputs:
            if isinstance(bound[i], torch.Tensor):
                _check_tensor(i, bound[i])
                bound[i] = bound[i].detach().contiguous()
                if self.params[i] == "inout":
                    bound[i] = bound[i].clone()
        for i in self.outs:
            if isinstance(self.params[i], Out):
                bound[i] = self._out_empty(i, args, bound, torch.zeros)
        return bound

    def _out_empty(self, i, args, bound, make):
        spec = self.params[i]
        if spec.like is not None:
            t = bound[spec.like] if spec.like in bound else args[self.inputs.index(spec.like)]
            return make(t.shape, dtype=spec.dtype or t.dtype, device=t.device)
        return make(tuple(spec.shape(*args)), dtype=spec.dtype or torch.float64)

    def _outputs(self, bound, value):
        if value is not None and not self.returns:
            raise TypeError(f"{self.kernel.__name__} returns {type(value).__name__}: describe it "
                            "with returns=True (a float return is an output of the op)")
        outs = [bound[i] for i in self.outs]
        if self.returns:
            outs.append(torch.tensor(float(value), dtype=torch.float64))
        return outs

    def _primal(self, *args):
        bound = self._bind(args)
        value = self.kernel(*(_value(bound[i]) for i in range(len(self.params))))
        return _single(self._outputs(bound, value))

    def _annotated(self, bound, shadows):
        anns = []
        for i in range(len(self.params)):
            v = _value(bound[i])
            if i in shadows:
                anns.append(Duplicated(v, shadows[i]))
            elif i in self.diff and np.ndim(v) == 0:
                anns.append(Active(v))
            else:
                anns.append(Const(v))
        return anns

    def _aug(self, *args):
        bound = self._bind(args)
        shadows = self._shadows(bound)
        if self.backward == "rerun":
            value = self.kernel(*(_value(bound[i]) for i in range(len(self.params))))
            return tuple(self._outputs(bound, value)) + (torch.zeros(1, dtype=torch.int64),)
        value, tape = augmented_forward(self.kernel, *self._annotated(bound, shadows))
        holder = _Holder(8)
        holder.tape, holder.shadows = tape, shadows
        with _lock:
            key = next(_ids)
            _tapes[key] = holder
        handle = torch.from_numpy(np.frombuffer(holder, dtype=np.int64))
        handle[0] = key
        return tuple(self._outputs(bound, value)) + (handle,)

    def _shadows(self, bound):
        return {i: np.zeros_like(bound[i].numpy()) for i in self.diff + self.outs
                if bound[i].dim() > 0}

    def _vjp(self, handle, *rest):
        douts = rest[len(self.inputs):]
        if self.backward == "rerun":
            bound = self._bind(rest[:len(self.inputs)])
            shadows = self._shadows(bound)
        else:
            holder = _tapes.get(int(handle[0]))
            if holder is None:
                raise RuntimeError(f"{self.kernel.__name__}: the tape of this forward call is "
                                   "gone (the handle tensor was copied or freed)")
            shadows = holder.shadows
            for s in shadows.values():
                s[...] = 0.0
        seed = 0.0
        for g, i in zip(douts, self.outs + ["return"]):
            if i == "return":
                seed = float(g)
            else:
                shadows[i][...] = g.detach().contiguous().numpy()
        if self.backward == "rerun":
            kw = {"seed": seed} if self.returns else {}
            derivs = autodiff(self.kernel, *self._annotated(bound, shadows), **kw)
        else:
            derivs = holder.tape.reverse(seed)
        return _single([torch.from_numpy(shadows[i].copy()) if i in shadows else
                        torch.tensor(derivs[i], dtype=rest[self.inputs.index(i)].dtype)
                        for i in self.diff])

    def _vjp2(self, *args):
        """(d<u, vjp>/d inputs, d<u, vjp>/d output seeds) = (H u, J u): forward mode over the
        reverse-mode gradient, and forward mode of the kernel."""
        n, m = len(self.inputs), self.n_outputs
        primal, douts, us = args[:n], args[n:n + m], args[n + m:]
        u = dict(zip(self.diff, us))
        try:
            hu = self._second_order(primal, douts, u)
        except UnsupportedError as exc:
            raise NotImplementedError(
                f"double backward of {self.kernel.__name__}: forward mode over its reverse-mode "
                f"gradient fails ({exc}); first derivatives do not need it") from exc
        ju = self._jvp(primal, u)
        return tuple(hu) + tuple(ju)

    def _jvp(self, primal, u):
        bound = self._bind(primal)
        tangents, anns = {}, []
        for i in range(len(self.params)):
            v = _value(bound[i])
            if np.ndim(v) and (i in self.diff or i in self.outs):
                tangents[i] = _tangent_array(u.get(i), v)
                anns.append(Duplicated(v, tangents[i]))
            elif i in self.diff:
                anns.append(Active(v, float(u[i])))
            else:
                anns.append(Const(v))
        dvalue = autodiff(self.kernel, *anns, mode=Forward)
        outs = [torch.from_numpy(tangents[i]) for i in self.outs]
        if self.returns:
            outs.append(torch.tensor(float(dvalue), dtype=torch.float64))
        return outs

    def _jvp_impl(self, *args):
        n = len(self.inputs)
        return _single(self._jvp(args[:n], dict(zip(self.diff, args[n:]))))

    def _lanes_vmap(self, op, lanes, skip):
        """A vmap rule for `op`: with only the last operands (seeds or tangents) batched, one
        batched call with k lanes (`lanes`); otherwise the loop."""
        loop = _loop_vmap(op)

        def rule(info, in_dims, *args):
            n, k = skip + len(self.inputs), info.batch_size
            if self.lanes and all(d is None for d in in_dims[:n]) and \
                    any(d is not None for d in in_dims[n:]):
                per_lane = [a.movedim(d, 0) if d is not None else a.expand(k, *a.shape)
                            for a, d in zip(args[n:], in_dims[n:])]
                outs = lanes(args[skip:n], per_lane, k)
                if outs is not None:
                    return _single(tuple(outs)), _single((0,) * len(outs))
            return loop(info, in_dims, *args)
        return rule

    def _lane_arrays(self, bound, per_lane, k):
        """Per kernel parameter: its k shadows (an array with a leading axis of k) for a
        differentiated or output array, from `per_lane` or zeros."""
        arrays = {}
        for i in self.diff + [j for j in self.outs if j not in self.diff]:
            v = _value(bound[i])
            if np.ndim(v):
                arrays[i] = per_lane[i].detach().contiguous().numpy().astype(v.dtype, copy=True) \
                    if i in per_lane else np.zeros((k,) + v.shape, v.dtype)
        return arrays

    def _vjp_lanes(self, primal, douts, k):
        """The k input gradients for k output seeds (a leading axis of k) in one batched
        reverse-mode call (the forward sweep runs once); None where batched reverse mode
        refuses the kernel."""
        bound = self._bind(primal)
        seeds = dict(zip(self.outs + ["return"], douts))
        shadows = self._lane_arrays(bound, seeds, k)
        if not shadows:
            return None
        kinds = [DUP if i in shadows else ACTIVE if i in self.diff else CONST_ARG
                 for i in range(len(self.params))]

        def fresh():
            b = self._bind(primal)
            return [_value(b[i]) for i in range(len(self.params))]
        ret = [float(s) for s in seeds["return"]] if self.returns else None
        try:
            derivs = self.batched(fresh, kinds, shadows, ret)
        except UnsupportedError:
            self.lanes = False
            return None
        self.calls["vjp_lanes"] += 1
        return [torch.from_numpy(shadows[i]) if i in shadows else
                torch.tensor(derivs[i], dtype=primal[self.inputs.index(i)].dtype) for i in self.diff]

    def _jvp_lanes(self, primal, us, k):
        """The outputs' tangents for k input tangents (a leading axis of k): forward mode with k
        directions in one call."""
        bound = self._bind(primal)
        us = dict(zip(self.diff, us))
        tangents = self._lane_arrays(bound, us, k)
        anns = [BatchDuplicated(_value(bound[i]), tuple(tangents[i])) if i in tangents else
                Active(_value(bound[i]), tuple(float(t) for t in us[i])) if i in self.diff else
                Const(_value(bound[i])) for i in range(len(self.params))]
        dvalue = autodiff(self.kernel, *anns, mode=Forward)
        self.calls["jvp_lanes"] += 1
        outs = [torch.from_numpy(tangents[i]) for i in self.outs]
        if self.returns:
            outs.append(torch.tensor([float(d) for d in dvalue], dtype=torch.float64))
        return outs

    def _second_order(self, primal, douts, u):
        """sum_k g_k H_k u (g the output seeds): the tangent of the reverse-mode gradient in
        direction u, by forward mode over an @njit function that calls it."""
        bound = self._bind(primal)
        scalars = tuple(i for i in self.diff if bound[i].dim() == 0)
        grad_fn = self._nested_vjp(scalars)
        seeds = dict(zip(self.outs + ["return"], douts))
        anns = []
        results = {}
        for i in range(len(self.params)):
            v = _value(bound[i])
            if i in scalars:
                anns.append(Active(v, float(u[i])))
            elif i in self.diff or i in self.outs:
                anns.append(Duplicated(v, _tangent_array(u.get(i), v)))
            else:
                anns.append(Const(v))
        for i in self.diff + [k for k in self.outs if k not in self.diff]:
            if i in scalars:
                continue
            seed = seeds[i].detach().contiguous().numpy().copy() if i in seeds else \
                np.zeros_like(_value(bound[i]))
            results[i] = np.zeros_like(seed)
            anns.append(Duplicated(seed, results[i]))
        gs = np.zeros(len(scalars))
        results["scalars"] = np.zeros(len(scalars))
        anns.append(Duplicated(gs, results["scalars"]))
        ret_seed = float(seeds["return"]) if self.returns else 0.0
        anns.append(Active(ret_seed, 0.0))
        autodiff(grad_fn, *anns, mode=Forward)
        return [torch.tensor(results["scalars"][scalars.index(i)], dtype=torch.float64)
                if i in scalars else torch.from_numpy(results[i]) for i in self.diff]

    def _nested_vjp(self, scalars):
        """@njit grad(*params, *seed arrays, gs, ret_seed): reverse mode of the kernel in
        autodiff, the Active scalars' derivatives written into gs."""
        fn = self._nested.get(scalars)
        if fn is not None:
            return fn
        names = [f"a{i}" for i in range(len(self.params))]
        dup = [i for i in self.diff + [k for k in self.outs if k not in self.diff] if i not in scalars]
        anns = [f"Duplicated(a{i}, s{i})" if i in dup else f"Active(a{i})" if i in scalars
                else f"Const(a{i})" for i in range(len(self.params))]
        seed = ", seed=ret_seed" if self.returns else ""
        body = [f"    d = autodiff(kernel, {', '.join(anns)}{seed})"]
        body += [f"    gs[{k}] = d[{i}]" for k, i in enumerate(scalars)]
        src = f"def grad({', '.join(names + [f's{i}' for i in dup] + ['gs', 'ret_seed'])}):\n" + \
            "\n".join(body) + "\n"
        scope = {"autodiff": autodiff, "Duplicated": Duplicated, "Active": Active, "Const": Const,
                 "kernel": self.kernel}
        exec(src, scope)
        fn = self._nested[scalars] = njit(scope["grad"])
        return fn

    # ---- fake tensors and autograd ------------------------------------------------------------

    def _fake_outputs(self, args):
        args = args[:len(self.inputs)]
        bound = dict(zip(self.inputs, args))
        outs = [self._out_empty(i, args, bound, torch.empty) if isinstance(self.params[i], Out)
                else torch.empty_like(bound[i]) for i in self.outs]
        if self.returns:
            first = next(a for a in args if isinstance(a, torch.Tensor))
            outs.append(first.new_empty((), dtype=torch.float64))
        return outs

    def _fake_grads(self, args):
        bound = dict(zip(self.inputs, args))
        return [torch.empty_like(bound[i]) for i in self.diff]

    def _aug_setup(self, ctx, inputs, output):
        ctx.save_for_backward(output[-1], *[t for t in inputs if isinstance(t, torch.Tensor)])
        ctx.scalars = [None if isinstance(t, torch.Tensor) else t for t in inputs]

    def _restore(self, ctx, saved):
        it = iter(saved)
        return [next(it) if s is None else s for s in ctx.scalars]

    def _aug_backward(self, ctx, *grads, vjp=None):
        handle, *saved = ctx.saved_tensors
        inputs = self._restore(ctx, saved)
        douts = [g if g is not None else torch.zeros(()) for g in grads[:self.n_outputs]]
        dins = (vjp or self.vjp)(handle, *inputs, *douts)
        dins = dins if isinstance(dins, (tuple, list)) else (dins,)
        per = dict(zip(self.diff, dins))
        return tuple(per.get(i) for i in self.inputs)

    def _vjp_setup(self, ctx, inputs, output):
        rest = inputs[1:]
        ctx.save_for_backward(*[t for t in rest if isinstance(t, torch.Tensor)])
        ctx.scalars = [None if isinstance(t, torch.Tensor) else t for t in rest]

    def _vjp_backward(self, ctx, *grads):
        rest = self._restore(ctx, ctx.saved_tensors)
        n = len(self.inputs)
        out = self.vjp2(*rest, *grads)
        out = out if isinstance(out, (tuple, list)) else (out,)
        per = dict(zip(self.diff, out[:len(self.diff)]))
        return (None,) + tuple(per.get(i) for i in self.inputs) + tuple(out[len(self.diff):])[:len(rest) - n]


def _transformed(args) -> bool:
    """Whether a torch.func transform (jvp, vmap, grad) wraps an argument, or an argument is a
    forward-AD dual tensor."""
    return any(isinstance(a, torch.Tensor) and (
        torch._C._functorch.is_functorch_wrapped_tensor(a) or
        torch.autograd.forward_ad.unpack_dual(a).tangent is not None) for a in args)


def _loop_vmap(op):
    """A vmap rule for `op`: one call per batch element, the results stacked on dim 0."""
    def rule(info, in_dims, *args):
        rows = []
        for b in range(info.batch_size):
            row = op(*[a.select(d, b) if d is not None else a for a, d in zip(args, in_dims)])
            rows.append(row if isinstance(row, (tuple, list)) else (row,))
        outs = tuple(_stack([r[k] for r in rows]) for k in range(len(rows[0])))
        return _single(outs), _single((0,) * len(outs))
    return rule


def _stack(tensors):
    if tensors[0].dtype != torch.int64:
        return torch.stack(tensors)
    # handles: the stacked tensor's memory holds the rows (and through them their tapes)
    holder = _Holder(8 * len(tensors) * tensors[0].numel())
    holder.rows = list(tensors)
    out = torch.from_numpy(np.frombuffer(holder, dtype=np.int64)).view(len(tensors), *tensors[0].shape)
    out.copy_(torch.stack(tensors))
    return out


def _fake_handle(args):
    first = next(a for a in args if isinstance(a, torch.Tensor))
    return first.new_empty((1,), dtype=torch.int64)


def _third_order(ctx, *grads):
    raise NotImplementedError("enzyme_py.torch: third derivatives of a kernel op are not "
                              "supported (the double backward is forward over reverse mode)")


def _check_param(i, p):
    if isinstance(p, Out):
        if (p.like is None) == (p.shape is None):
            raise ValueError(f"parameter {i}: Out takes like= or shape=, one of them")
        return p
    if p in ("in", "inout", "const") or p in _SCALARS:
        return p
    raise ValueError(f"parameter {i}: {p!r} is not a role: use 'in', 'inout', 'const', Out(...), "
                     "int, float or bool")


def _check_tensor(i, t):
    if t.device.type != "cpu":
        raise NotImplementedError(f"argument for parameter {i}: enzyme_py.torch runs CPU kernels; "
                                  f"this tensor is on {t.device}")


def _schema_type(p):
    return _SCALARS.get(p, "Tensor") if not isinstance(p, str) else "Tensor"


def _value(x):
    if isinstance(x, torch.Tensor):
        return x.item() if x.dim() == 0 else x.numpy()
    return x


def _tangent_array(u, like):
    if u is None:
        return np.zeros_like(like)
    return u.detach().contiguous().numpy().astype(like.dtype, copy=True).reshape(like.shape)


def _single(outs):
    return outs[0] if len(outs) == 1 else tuple(outs)
