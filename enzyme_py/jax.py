"""A Numba kernel as a function of JAX arrays, its derivative rules generated (docs/frameworks.md).

    f = enzyme_py.jax.wrap(heat, (u0, out, 0.1, 50), inputs=(0,), outputs=(1,))
    jax.jit(jax.grad(lambda u: f(u).sum()))(u0)

Four primitives, each lowered to an XLA FFI custom call (jax_ffi.py): unbatched, to a handler
compiled from the kernel or its split-mode / forward-mode derivative (no Python on the call);
batched, to a Python handler on XLA's buffers (`ffi=False`: all through `jax.pure_callback`):

- `call`: the kernel (the outputs from the inputs);
- `aug`: split mode's augmented forward sweep (modes/split.py): the outputs and the handle of the
  tape it keeps (in the kernel's ring of tapes, jax_ffi.Ring; a batched call's in `tapes`);
  `call`'s JVP rule binds it;
- `tangent`: forward mode, the output tangents from the input tangents; linear in the tangents.
  Its transpose is
- `reverse`: the reverse sweep from the Tape the handle names; the kernel is not run again.

Batching: forward mode's k directions (BatchDuplicated) when only the tangents are batched,
batched reverse mode's k seeds in one call when only the cotangents are (the tape loop where
batched reverse mode refuses the kernel), rev2 once per distinct cotangent, a loop over the batch
otherwise.

Second derivatives (jax_second.py): two more primitives, `tangent2` ([u^T H_k v]_k, the JVP of
`tangent` in the inputs) and `rev2` (sum_k ct_k H_k v, the JVP of `reverse` in the inputs), by
forward mode over reverse mode of the kernel, not from the tape. Third derivatives raise.
"""
from __future__ import annotations

import inspect
import itertools
import threading
from collections import Counter, OrderedDict
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from .annotations import BatchDuplicated, Const, Duplicated, Forward
from . import jax_ffi
from .errors import UnsupportedError
from .jax_second import SecondOrder
from .lanes import CONST as CONST_ARG, DUP, BatchedReverse
from .api import autodiff
from .arguments import typeof, validate
from .bridge.frozen import as_dispatcher
from .bridge.restype import return_type
from .bridge.convention import returns_float
from .modes.split import Tape, compiled_split

__all__ = ["wrap", "JaxKernel", "tapes", "SecondOrderError"]

IN, INOUT, OUT, CONST, STATIC = "in", "inout", "out", "const", "static"


class SecondOrderError(NotImplementedError):
    """A derivative enzyme_py.jax does not give: a third derivative, or a second derivative
    forward mode over reverse mode cannot build for the kernel (the reason in the message)."""


SECOND_ORDER = ("enzyme_py.jax: a derivative through the handle of a split-mode tape was asked "
                "(the tape's dependence on the inputs is not visible to JAX)")
THIRD_ORDER = ("enzyme_py.jax gives first and second derivatives: a third derivative was asked "
               "(the second-order rules, forward mode over reverse or forward mode, are not "
               "differentiated again)")


class JaxKernel:
    """What `wrap` learnt from a kernel and its example arguments; a primitive's parameter
    (hashed by identity). `calls` counts the host calls of each primitive ("call", "aug",
    "tangent", "reverse"; a batched loop counts each item)."""

    def __init__(self, kernel, example_args, inputs, outputs, ffi=True, max_tapes=16):
        self.ffi, self.targets = ffi, {}   # (primitive, batch, size) -> FFI target
        self.max_tapes, self.ring = max_tapes, None   # jax_ffi.Ring: the unbatched calls' tapes
        self.split = None           # split mode's compiled entries, after the first `aug`
        self.second = None          # jax_second.SecondOrder, after the first second derivative
        self.dispatcher = as_dispatcher(kernel)
        self.name = getattr(self.dispatcher, "__name__", "kernel")
        examples = list(example_args)
        inputs, outputs = set(_positions(inputs, len(examples))), set(_positions(outputs, len(examples)))
        self.kinds, self.examples = [], []
        for pos, v in enumerate(examples):
            self.kinds.append(_kind(pos, v, pos in inputs, pos in outputs))
            self.examples.append(np.ascontiguousarray(v) if isinstance(v, np.ndarray) else v)
        argtypes = tuple(typeof(i, v) for i, v in enumerate(self.examples))
        self.returns = returns_float(return_type(self.dispatcher, argtypes))
        self.operands = [p for p, k in enumerate(self.kinds) if k in (IN, INOUT, CONST)]
        self.diff = [p for p, k in enumerate(self.kinds) if k in (IN, INOUT)]
        self.outs = [p for p, k in enumerate(self.kinds) if k in (OUT, INOUT)]
        if not self.outs and not self.returns:
            raise TypeError(f"{self.name}: no outputs: name the arrays it writes in `outputs`, "
                            f"or return a float")
        self.in_avals = [_aval(self.examples[p]) for p in self.operands]
        self.out_avals = [_aval(self.examples[p]) for p in self.outs]
        if self.returns:
            rt = return_type(self.dispatcher, argtypes)
            self.out_avals.append(jax.core.ShapedArray((), np.dtype(str(rt))))
        self.dup = sorted(set(self.diff) | set(self.outs))     # the shadowed arguments
        self.calls = Counter()
        self.lanes = True           # batches as k lanes; False: a loop (batched reverse refused)
        self.batched = BatchedReverse(self.dispatcher)

    def __repr__(self):
        return f"JaxKernel({self.name})"

    # ---- the host side: NumPy arrays in and out ------------------------------------------------

    def arguments(self, operands):
        """The kernel's arguments: fresh C-contiguous copies of the operands, zeroed outputs,
        the static values."""
        args = list(self.examples)
        for p, v in zip(self.operands, operands):
            args[p] = np.array(v, dtype=self.examples[p].dtype, order="C", copy=True)
        for p in self.outs:
            if self.kinds[p] == OUT:
                args[p] = np.zeros_like(self.examples[p])
        return args

    def results(self, args, value):
        out = [args[p] for p in self.outs]
        if self.returns:
            out.append(np.asarray(value, dtype=self.out_avals[-1].dtype))
        return out

    def call(self, *operands):
        self.calls["call"] += 1
        args = self.arguments(operands)
        return self.results(args, self.dispatcher(*args))

    def aug(self, *operands, call=None):
        """The outputs and a tape's handle: a tape in the kernel's ring (a positive handle), or,
        for the items of a batched call (`call` groups them), in `tapes` (a negative one)."""
        self.calls["aug"] += 1
        args = self.arguments(operands)
        shadows = {p: np.zeros_like(args[p]) for p in self.dup}
        sh = [shadows[p] for p in self.dup]
        split = self.split_entries()
        if call is None:
            value, handle = self.tape_ring().aug(*args, *sh)
            return self.results(args, value) + [np.int32(handle)]
        value, frame = split.forward(*args, *sh)
        tape = Tape(split, frame, args, sh, (len(args), split.spec.active_positions), self.name)
        return self.results(args, value) + [np.int32(-tapes.add(call, tape, shadows))]

    def split_entries(self):
        """Split mode's compiled gradient (built on first use, the arguments checked then)."""
        if self.split is None:
            args = self.arguments([self.examples[p] for p in self.operands])
            annotated = [Duplicated(a, np.zeros_like(a)) if p in self.dup else Const(a)
                         for p, a in enumerate(args)]
            kinds = tuple(validate(i, a) for i, a in enumerate(annotated))
            params = inspect.signature(self.dispatcher.py_func).parameters.values()
            if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) or \
                    len(params) != len(args):
                raise TypeError(f"{self.name}: wrap takes one example argument per parameter of the "
                                f"kernel ({len(params)}), not {len(args)}")
            # the operands are immutable XLA buffers: the reverse sweep gets the same arrays
            kept = [p for p in self.operands if p not in self.outs]
            self.split = compiled_split(self.dispatcher, annotated, kinds, kept)
        return self.split

    def tape_ring(self):
        if self.ring is None:
            self.ring = jax_ffi.Ring(self.split_entries(), self.max_tapes)
        return self.ring

    def release_tapes(self):
        """Free the tapes of this kernel's unbatched forward calls."""
        if self.ring is not None:
            self.ring.clear()

    def tangent(self, handle, *rest):
        """Forward mode; tangents with a leading axis of k (BatchDuplicated) when `lanes` is k."""
        return self.forward(rest[:len(self.operands)], rest[len(self.operands):], 0)

    def forward(self, operands, tangents, lanes):
        self.calls["tangent"] += 1
        args = self.arguments(operands)
        dx = dict(zip(self.diff, tangents))
        annotated = []
        for p, a in enumerate(args):
            if p in dx or self.kinds[p] == OUT:
                t = np.array(dx[p], dtype=a.dtype, order="C", copy=True) if p in dx else \
                    np.zeros((lanes,) * (lanes > 0) + a.shape, a.dtype)
                annotated.append(BatchDuplicated(a, tuple(t)) if lanes else Duplicated(a, t))
            else:
                annotated.append(Const(a))
        t_value = autodiff(self.dispatcher, *annotated, mode=Forward)
        out = [np.stack(a.shadows) if lanes else a.shadow for a in (annotated[p] for p in self.outs)]
        if self.returns:
            out.append(np.asarray(t_value, dtype=self.out_avals[-1].dtype))
        return out

    def reverse(self, handle, *rest):
        self.calls["reverse"] += 1
        operands, cts = rest[:len(self.operands)], rest[len(self.operands):]
        if int(handle) < 0:
            return tapes.reverse(-int(handle), self, cts)
        args = self.arguments(operands)
        shadows = {p: np.zeros_like(args[p]) for p in self.dup}
        for p, ct in zip(self.outs, cts):
            shadows[p][...] = ct
        seed = float(cts[len(self.outs)]) if self.returns else 0.0
        if not self.tape_ring().reverse(*args, *[shadows[p] for p in self.dup], seed, int(handle)):
            raise RuntimeError(jax_ffi.RELEASED.format(name=self.name, size=self.max_tapes))
        return [shadows[p] for p in self.diff]

    def reverse_lanes(self, operands, cts, lanes):
        """The reverse-mode gradients for k = `lanes` cotangents (a leading axis of k), in one
        batched reverse-mode call (modes/batched.py: the forward sweep runs once, the k adjoint
        sweeps side by side). None where batched reverse mode refuses the kernel (the caller
        loops over the tape then)."""
        shadows = {}
        for p, ex in enumerate(self.examples):
            if p in self.dup:
                shadows[p] = np.zeros((lanes,) + ex.shape, ex.dtype)
        for p, ct in zip(self.outs, cts):
            shadows[p][...] = ct
        kinds = [DUP if p in self.dup else CONST_ARG for p in range(len(self.kinds))]
        seeds = np.asarray(cts[len(self.outs)], dtype=float) if self.returns else None
        try:
            self.batched(partial(self.arguments, operands), kinds, shadows, seeds)
        except UnsupportedError:
            self.lanes = False
            return None
        self.calls["reverse"] += 1
        return [shadows[p] for p in self.diff]

    def tangent2(self, *arrays):
        """[u^T H_k v]_k: one forward-over-reverse product per output entry (jax_second.py)."""
        self.calls["tangent2"] += 1
        n, d = len(self.operands), len(self.diff)
        return self._second(lambda s: s.tangent2(arrays[:n], arrays[n:n + d], arrays[n + d:]))

    def rev2(self, *arrays, vs=None):
        """sum_k ct_k H_k v: forward mode over reverse mode; `vs` several v, one call."""
        self.calls["rev2"] += 1
        n, m = len(self.operands), len(self.out_avals)
        many = vs is not None
        vs = vs if many else [arrays[n + m:]]
        out = self._second(lambda s: s.rev2(arrays[:n], arrays[n:n + m], vs))
        return out if many else out[0]

    def _second(self, run):
        if self.second is None:
            self.second = SecondOrder(self)
        try:
            return run(self.second)
        except UnsupportedError as exc:
            raise SecondOrderError(f"second derivatives of {self.name}: forward mode over its "
                                   f"reverse-mode gradient fails ({exc})") from exc


def _positions(ps, n):
    ps = (ps,) if isinstance(ps, int) else tuple(ps)
    for p in ps:
        if not isinstance(p, int) or not 0 <= p < n:
            raise ValueError(f"argument position {p!r} out of range for {n} arguments")
    return ps


def _kind(pos, v, is_input, is_output):
    if isinstance(v, np.ndarray):
        if (is_input or is_output) and v.dtype.kind not in "f":
            raise TypeError(f"argument {pos}: a differentiable input or output is a float array, "
                            f"not {v.dtype}")
        return INOUT if is_input and is_output else IN if is_input else OUT if is_output else CONST
    if is_input or is_output:
        raise TypeError(f"argument {pos}: inputs and outputs are arrays, not {type(v).__name__} "
                        f"(pass a float as a 1-element array to differentiate it)")
    return STATIC


def _aval(v):
    return jax.core.ShapedArray(v.shape, v.dtype)


# ---- the tapes the augmented forward sweeps keep ----------------------------------------------

class Tapes:
    """Tapes by handle, each with its shadow arrays, grouped by the forward call that made them (a
    batched call makes one per item). JAX cannot say when a residual dies: the tapes of the oldest
    calls are released beyond `max_calls` calls or `max_bytes` bytes (the newest call's always
    kept). A later reverse sweep from a released tape raises RuntimeError."""

    def __init__(self, max_calls=16, max_bytes=1 << 30):
        self.max_calls, self.max_bytes = max_calls, max_bytes
        self._held, self._calls, self._bytes = {}, OrderedDict(), 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def new_call(self):
        with self._lock:
            call = next(self._ids)
            self._calls[call] = []
            self._release()
        return call

    def add(self, call, tape, shadows):
        size = tape.nbytes + sum(s.nbytes for s in shadows.values())
        with self._lock:
            handle = next(self._ids) % (1 << 31)
            self._held[handle] = (tape, shadows, size, threading.Lock())
            self._calls.setdefault(call, []).append(handle)
            self._bytes += size
            self._release()
        return handle

    def _release(self):
        while len(self._calls) > 1 and (len(self._calls) > self.max_calls or self._bytes > self.max_bytes):
            self._free(next(iter(self._calls)))

    def _free(self, call):
        for handle in self._calls.pop(call):
            tape, _, size, _ = self._held.pop(handle)
            self._bytes -= size
            tape.free()

    def clear(self):
        """Release every tape."""
        with self._lock:
            for call in list(self._calls):
                self._free(call)

    def __len__(self):
        """The tapes held."""
        return len(self._held)

    def reverse(self, handle, kernel, cts):
        """Seed the shadows with the cotangents and run the reverse sweep: the cotangents of the
        differentiable inputs."""
        with self._lock:
            held = self._held.get(handle)
        if held is None:
            raise RuntimeError(
                f"{kernel.name}: the tape of this forward call was released (enzyme_py.jax.tapes "
                f"keeps the tapes of the newest {self.max_calls} forward calls within "
                f"{self.max_bytes} bytes): run the forward call again, or raise "
                f"enzyme_py.jax.tapes.max_calls / max_bytes")
        tape, shadows, _, lock = held
        with lock:
            for p in kernel.diff:
                shadows[p][...] = 0
            for p, ct in zip(kernel.outs, cts):
                shadows[p][...] = ct
            seed = float(cts[len(kernel.outs)]) if kernel.returns else 0.0
            tape.reverse(seed)
            return [shadows[p].copy() for p in kernel.diff]


tapes = Tapes()


# ---- the primitives ---------------------------------------------------------------------------

def _operand_avals(kernel, name):
    """The unbatched avals of a primitive's operands."""
    handle = [jax.core.ShapedArray((), np.int32)]
    tangents = [kernel.in_avals[kernel.operands.index(p)] for p in kernel.diff]
    return {"call": kernel.in_avals, "aug": kernel.in_avals,
            "tangent": handle + kernel.in_avals + tangents,
            "reverse": handle + kernel.in_avals + kernel.out_avals,
            "tangent2": kernel.in_avals + tangents + tangents,
            "rev2": kernel.in_avals + kernel.out_avals + tangents}[name]


def _result_avals(kernel, name):
    if name == "aug":
        return kernel.out_avals + [jax.core.ShapedArray((), np.int32)]
    if name in ("reverse", "rev2"):
        return [kernel.in_avals[kernel.operands.index(p)] for p in kernel.diff]
    return kernel.out_avals


def _batched(aval, size):
    return aval.update(shape=(size,) + aval.shape) if size else aval


def _abstract_eval(*avals, name, kernel, batch, size):
    for i, (got, want, b) in enumerate(zip(avals, _operand_avals(kernel, name), batch)):
        want = _batched(want, size if b else 0)
        if got.shape != want.shape or got.dtype != want.dtype:
            hint = "" if got.dtype == want.dtype else \
                " (float64 kernels need jax.config.update('jax_enable_x64', True))"
            raise TypeError(f"{kernel.name}: operand {i} of {name} is {got.str_short()}, the "
                            f"example arguments make it {want.str_short()}{hint}")
    return [_batched(a, size) for a in _result_avals(kernel, name)]


def _host(*arrays, name, kernel, batch, size):
    """Run primitive `name` on NumPy arrays; a batch as k lanes or a loop."""
    method = getattr(kernel, name)
    if not size:
        return method(*arrays)
    n_fixed = 1 + len(kernel.operands)
    if name in ("tangent", "reverse") and kernel.lanes and not any(batch[:n_fixed]):   # u or ct only
        lanes = [a if b else np.broadcast_to(a, (size,) + a.shape)
                 for a, b in zip(arrays[n_fixed:], batch[n_fixed:])]
        if name == "tangent":
            return kernel.forward(arrays[1:n_fixed], lanes, size)
        out = kernel.reverse_lanes(arrays[1:n_fixed], lanes, size)
        if out is not None:
            return out
    n = len(kernel.operands)
    if name == "rev2" and not any(batch[:n]):
        return _rev2_groups(arrays, kernel, batch, size)
    if name == "aug":
        method = partial(method, call=tapes.new_call())
    rows = [method(*[a[i] if b else a for a, b in zip(arrays, batch)]) for i in range(size)]
    return [np.stack(col) for col in zip(*rows)]


def _rev2_groups(arrays, kernel, batch, size):
    """rev2 with x unbatched: one call per distinct cotangent, its directions as lanes (the
    cotangents of `hessian` and `jacfwd(jacrev)` repeat across the directions)."""
    n, m = len(kernel.operands), len(kernel.out_avals)
    item = [[a[i] if b else a for a, b in zip(arrays, batch)] for i in range(size)]
    groups = {}
    for i, row in enumerate(item):
        key = b"".join(np.ascontiguousarray(c).tobytes() for c in row[n:n + m])
        groups.setdefault(key, []).append(i)
    out = [None] * size
    for rows in groups.values():
        first = item[rows[0]]
        for i, h in zip(rows, kernel.rev2(*first[:n + m], vs=[item[i][n + m:] for i in rows])):
            out[i] = h
    return [np.stack(col) for col in zip(*out)]


def _impl(*arrays, name, kernel, batch, size):
    _abstract_eval(*[jax.typeof(a) for a in arrays], name=name, kernel=kernel, batch=batch, size=size)
    out = _host(*[np.asarray(a) for a in arrays], name=name, kernel=kernel, batch=batch, size=size)
    return [jnp.asarray(o) for o in out]


def _callback(*arrays, name, kernel, batch, size):
    shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype)
              for a in _abstract_eval(*[jax.typeof(a) for a in arrays], name=name, kernel=kernel,
                                      batch=batch, size=size)]
    host = partial(_host, name=name, kernel=kernel, batch=batch, size=size)
    return jax.pure_callback(host, shapes, *arrays)


def _lowering(name):
    """Lower a primitive to an XLA FFI call: the plain unbatched call to the handler compiled from
    the kernel; the others to a Python handler on XLA's buffers (jax_ffi.py). With ffi=False,
    jax.pure_callback."""
    def lower(ctx, *args, kernel, batch, size):
        if not kernel.ffi:
            return mlir.lower_fun(partial(_callback, name=name), multiple_results=True)(
                ctx, *args, kernel=kernel, batch=batch, size=size)
        key = (name, batch, size)
        if key not in kernel.targets:
            if name == "call" and not size:
                kernel.targets[key] = jax_ffi.register(kernel)
            elif name in ("aug", "reverse", "tangent") and not size:
                kernel.tape_ring()
                kernel.targets[key] = jax_ffi.register_derivative(kernel, name)
            else:
                ins = [_batched(a, size if b else 0) for a, b in zip(_operand_avals(kernel, name), batch)]
                kernel.targets[key] = jax_ffi.register_python(
                    f"{kernel.name}_{name}", partial(_host, name=name, kernel=kernel, batch=batch, size=size),
                    ins, [_batched(a, size) for a in _result_avals(kernel, name)])
        return jax.ffi.ffi_lowering(kernel.targets[key])(ctx, *args)
    return lower


def _primitive(name):
    p = Primitive(f"enzyme_py_{name}")
    p.multiple_results = True
    p.def_impl(partial(_impl, name=name))
    p.def_abstract_eval(partial(_abstract_eval, name=name))
    mlir.register_lowering(p, _lowering(name))
    batching.primitive_batchers[p] = partial(_batch_rule, p)
    return p


def _batch_rule(prim, args, dims, *, kernel, batch, size):
    """vmap: the batch axis to the front; under a primitive already batched, the new axis and the
    old one merged into one."""
    n = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    flat, flags = [], []
    for a, d, old in zip(args, dims, batch):
        new = d is not None
        if new:
            a = jnp.moveaxis(a, d, 0)
        if size and (new or old):
            if not new:
                a = jnp.broadcast_to(a, (n,) + a.shape)
            elif not old:
                a = jnp.broadcast_to(a[:, None], (n, size) + a.shape[1:])
            a = a.reshape((n * size,) + a.shape[2:])
        flat.append(a)
        flags.append(new or old)
    out = prim.bind(*flat, kernel=kernel, batch=tuple(flags), size=n * size if size else n)
    if size:
        out = [o.reshape((n, size) + o.shape[1:]) for o in out]
    return out, [0] * len(out)


call_p, aug_p, tangent_p, reverse_p, tangent2_p, rev2_p = (
    _primitive(n) for n in ("call", "aug", "tangent", "reverse", "tangent2", "rev2"))




def _check_const(kernel, tangents):
    """tangents: one per operand; a non-zero one of an operand not differentiated raises."""
    for p, t in zip(kernel.operands, tangents):
        if kernel.kinds[p] == CONST and not _zero(t):
            raise TypeError(f"{kernel.name}: argument {p} is not among the inputs given to wrap, "
                            f"and a derivative with respect to it was asked")


def _zero(t):
    return type(t) is ad.Zero


def _bind(prim, kernel, size, *args):
    """Bind a primitive, each operand batched when it has the batch axis (one more dimension
    than its unbatched aval)."""
    want = _operand_avals(kernel, prim.name[len("enzyme_py_"):])
    flags = tuple(bool(size) and jnp.ndim(a) == len(w.shape) + 1 for a, w in zip(args, want))
    return prim.bind(*args, kernel=kernel, batch=flags, size=size)


def _fit(d, primal):
    """A cotangent for an undefined primal: summed over the batch where the primal has none."""
    return d.sum(0) if jnp.ndim(d) == len(primal.aval.shape) + 1 else d


def _inst(ts):
    return [ad.instantiate_zeros(t) for t in ts]


def _diff_of(kernel, per_operand):
    return [per_operand[kernel.operands.index(p)] for p in kernel.diff]


def _add(terms, like):
    if not terms:
        return [ad.Zero(jax.typeof(o).to_tangent_aval()) for o in like]
    return [sum(ts[1:], ts[0]) for ts in zip(*terms)]


def _forward(kernel, size, handle, primals, tangents, outs):
    """The outputs' tangents: forward mode from the inputs' tangents (one per operand)."""
    _check_const(kernel, tangents)
    dx = _diff_of(kernel, tangents)
    if all(_zero(t) for t in dx):
        return _add([], outs)
    return _bind(tangent_p, kernel, size, handle, *primals, *_inst(dx))


def _call_jvp(primals, tangents, *, kernel, batch, size):
    *outs, handle = aug_p.bind(*primals, kernel=kernel, batch=batch, size=size)
    return outs, _forward(kernel, size, handle, primals, tangents, outs)


def _aug_jvp(primals, tangents, *, kernel, batch, size):
    """Second order (the outputs of a gradient's forward sweep differentiated): as `call`."""
    *outs, handle = aug_p.bind(*primals, kernel=kernel, batch=batch, size=size)
    touts = _forward(kernel, size, handle, primals, tangents, outs)
    return outs + [handle], list(touts) + [ad.Zero(jax.typeof(handle).to_tangent_aval())]


def _tangent_jvp(primals, tangents, *, kernel, batch, size):
    """d(J u) = J du + [u^T H_k dx]_k (tangent2: forward over forward)."""
    return _linear_jvp(tangent_p, tangent2_p, primals, tangents, kernel, batch, size)


def _reverse_jvp(primals, tangents, *, kernel, batch, size):
    """d(J^T ct) = J^T dct + sum_k ct_k H_k dx (rev2: forward over reverse)."""
    return _linear_jvp(reverse_p, rev2_p, primals, tangents, kernel, batch, size)


def _linear_jvp(prim, second, primals, tangents, kernel, batch, size):
    """The JVP of `prim`, linear in its last operands w (u or ct) given the tape handle and x:
    prim(dw) plus `second`'s term in dx (w^T H dx)."""
    n = len(kernel.operands)
    handle, x, w = primals[0], primals[1:1 + n], primals[1 + n:]
    _check_const(kernel, tangents[1:1 + n])
    out = prim.bind(*primals, kernel=kernel, batch=batch, size=size)
    dw, dx = tangents[1 + n:], _diff_of(kernel, tangents[1:1 + n])
    terms = []
    if not all(_zero(t) for t in dw):
        terms.append(_bind(prim, kernel, size, handle, *x, *_inst(dw)))
    if not all(_zero(t) for t in dx):
        terms.append(_bind(second, kernel, size, *x, *w, *_inst(dx)))
    return out, _add(terms, out)


def _bilinear_jvp(prim):
    """JVP of tangent2 / rev2 (x, a, b): bilinear in a and b; a tangent of x is a third
    derivative."""
    def rule(primals, tangents, *, kernel, batch, size):
        n = len(kernel.operands)
        if not all(_zero(t) for t in tangents[:n]):
            raise SecondOrderError(THIRD_ORDER)
        m = len(_operand_avals(kernel, prim.name[len("enzyme_py_"):])) - n - len(kernel.diff)
        x, a, b = primals[:n], primals[n:n + m], primals[n + m:]
        da, db = tangents[n:n + m], tangents[n + m:]
        out = prim.bind(*primals, kernel=kernel, batch=batch, size=size)
        terms = []
        if not all(_zero(t) for t in da):
            terms.append(_bind(prim, kernel, size, *x, *_inst(da), *b))
        if not all(_zero(t) for t in db):
            terms.append(_bind(prim, kernel, size, *x, *a, *_inst(db)))
        return out, _add(terms, out)
    return rule


def _cotangents(cts):
    return [ad.instantiate_zeros(c) for c in cts]


def _tangent_transpose(cts, handle, *rest, kernel, batch, size):
    """J u transposed in u: the reverse sweep from the tape."""
    n = len(kernel.operands)
    operands, dx = rest[:n], rest[n:]
    if ad.is_undefined_primal(handle) or any(ad.is_undefined_primal(a) for a in operands):
        raise SecondOrderError(SECOND_ORDER)
    dxs = _bind(reverse_p, kernel, size, handle, *operands, *_cotangents(cts))
    return [None] * (1 + n) + [_fit(d, t) if ad.is_undefined_primal(t) else None for d, t in zip(dxs, dx)]


def _reverse_transpose(cts, handle, *rest, kernel, batch, size):
    """J^T ct transposed in ct: forward mode, J w."""
    n = len(kernel.operands)
    operands, ct = rest[:n], rest[n:]
    if ad.is_undefined_primal(handle) or any(ad.is_undefined_primal(a) for a in operands):
        raise SecondOrderError(THIRD_ORDER)
    outs = _bind(tangent_p, kernel, size, handle, *operands, *_cotangents(cts))
    return [None] * (1 + n) + [_fit(d, t) if ad.is_undefined_primal(t) else None for d, t in zip(outs, ct)]


def _tangent2_transpose(cts, *args, kernel, batch, size):
    """[u^T H_k v]_k transposed in v (or u): sum_k w_k H_k u (rev2)."""
    n, d = len(kernel.operands), len(kernel.diff)
    x, u, v = args[:n], args[n:n + d], args[n + d:]
    lin_u, lin_v = any(map(ad.is_undefined_primal, u)), any(map(ad.is_undefined_primal, v))
    if any(map(ad.is_undefined_primal, x)) or lin_u == lin_v:
        raise SecondOrderError(THIRD_ORDER)
    known, linear = (u, v) if lin_v else (v, u)
    out = _bind(rev2_p, kernel, size, *x, *_cotangents(cts), *known)
    fitted = [_fit(o, t) for o, t in zip(out, linear)]
    return [None] * n + ([None] * d + fitted if lin_v else fitted + [None] * d)


def _rev2_transpose(cts, *args, kernel, batch, size):
    """sum_k ct_k H_k v transposed in v: itself (H_k symmetric); in ct: tangent2."""
    n, m = len(kernel.operands), len(kernel.out_avals)
    x, ct, v = args[:n], args[n:n + m], args[n + m:]
    lin_ct, lin_v = any(map(ad.is_undefined_primal, ct)), any(map(ad.is_undefined_primal, v))
    if any(map(ad.is_undefined_primal, x)) or lin_ct == lin_v:
        raise SecondOrderError(THIRD_ORDER)
    if lin_v:
        out = _bind(rev2_p, kernel, size, *x, *ct, *_cotangents(cts))
        return [None] * (n + m) + [_fit(o, t) for o, t in zip(out, v)]
    out = _bind(tangent2_p, kernel, size, *x, *_cotangents(cts), *v)
    return [None] * n + [_fit(o, t) for o, t in zip(out, ct)] + [None] * len(v)


ad.primitive_jvps[call_p] = _call_jvp
ad.primitive_jvps[aug_p] = _aug_jvp
ad.primitive_jvps[tangent_p] = _tangent_jvp
ad.primitive_jvps[reverse_p] = _reverse_jvp
ad.primitive_jvps[tangent2_p] = _bilinear_jvp(tangent2_p)
ad.primitive_jvps[rev2_p] = _bilinear_jvp(rev2_p)
ad.primitive_transposes[tangent_p] = _tangent_transpose
ad.primitive_transposes[reverse_p] = _reverse_transpose
ad.primitive_transposes[tangent2_p] = _tangent2_transpose
ad.primitive_transposes[rev2_p] = _rev2_transpose


# ---- the user's function ----------------------------------------------------------------------

def wrap(kernel, example_args, inputs=(), outputs=(), ffi=True, max_tapes=16):
    """A function of JAX arrays that runs `kernel` (a Numba @njit dispatcher).

    `example_args`: one value per kernel parameter; arrays give the shapes and dtypes the function
    takes, scalars are fixed (static) values. `inputs`: the positions of the float arrays to
    differentiate; `outputs`: the positions of the arrays the kernel writes. An output that is
    not an input starts zeroed and is not an argument of the function; one that is both is
    taken and returned (its final value). Other arrays are taken, not differentiated.

    The function takes the array arguments that are not outputs only, in the kernel's order, and
    returns the outputs in that order, then the return value when the kernel returns a float
    (one value alone, not in a tuple). It works under jit, grad, vjp, jvp, jacfwd, jacrev,
    hessian and vmap, to second order; `.kernel` is its JaxKernel (`.calls` counts the host calls).

    `ffi`: under jit, an unbatched call or first derivative runs through an XLA FFI handler
    compiled from the kernel or its derivative (jax_ffi.py: no Python on the call), batched calls
    and second derivatives through a Python FFI handler; False sends them all through
    jax.pure_callback (slower; it shows the exception a kernel raises, which the compiled
    handlers report by name only). `max_tapes`: the unbatched forward calls whose tapes are kept
    (the newest; jax_ffi.Ring)."""
    k = JaxKernel(kernel, example_args, inputs, outputs, ffi, max_tapes)

    def f(*args):
        if len(args) != len(k.operands):
            raise TypeError(f"{k.name} through enzyme_py.jax takes {len(k.operands)} arrays "
                            f"(arguments {k.operands} of the kernel), not {len(args)}")
        out = call_p.bind(*[jnp.asarray(a) for a in args], kernel=k,
                          batch=(False,) * len(args), size=0)
        return out[0] if len(out) == 1 else tuple(out)

    f.kernel = k
    f.__name__ = k.name
    f.__doc__ = f"{k.name} (a Numba kernel) as a function of JAX arrays (enzyme_py.jax.wrap)"
    return f
