"""Sparse Jacobians as scipy.sparse matrices (docs/sparse.md).

`SparseJacobian(f, argnum)` keeps what it learns across calls:

1. The pattern, by forward mode run with NaN tangents: lane k of a sweep carries NaN in a set
   of elements of the differentiated array and zeros elsewhere; NaN survives every sum and
   product (0 * NaN is NaN), so output i comes out NaN in lane k exactly when the code this
   input runs computes its derivative from the tangent of an element of the set. Which sets,
   and how the pattern is read off (exactly), is sparsity.py's: one element per lane up to
   4096 inputs, a residue design checked by a colouring beyond. A derivative that is zero at
   this point but not structurally (x * y at y = 0) is found all the same.
2. Whether the pattern holds for other inputs: ir_passes' `decisions` lists the branches,
   selects, addresses, min/max and opaque calls that depend on the differentiated values. With
   none, the pattern is kept while the other arguments stay equal (compared on each call) and
   the shapes stay the same. With some, ir_passes' pattern_union rewrites a copy of the code
   so that both arms of each branch, select and min/max run (the primal values those of the
   way taken, the tangents NaN when either arm's is); when no decision is left, the NaN runs
   use that copy (guarded forward mode), the pattern is the union of every way the decisions
   can go, `united` is True and the pattern is kept. Otherwise (an address or a loop bound
   computed from the values) `input_specific` is True and every call finds the pattern again
   for its own input (as costly as a dense Jacobian). Fast-math flags (NaN may
   be assumed away) or a float read as integer bits block the NaN run: then the Jacobian is
   computed dense (every column its own colour), `dense` says why and a
   SparseJacobianWarning is issued. A derivative never comes out zero because a pattern missed it.
3. A greedy column colouring (colouring.py, the best of four orders) and one forward sweep per 16 colours, each lane
   seeded with the sum of one colour's unit vectors; the lanes are decompressed into a
   csr_matrix with the pattern's structure (entries zero at this point stay stored).

The matrix is (output.size, x.size), both flattened in C order, as `jacobian(...).reshape`.
"""
from __future__ import annotations

import warnings

import numba
import numpy as np
import scipy.sparse as sp

from ir_passes import decisions, parse_module
from ir_passes import InternalError
from ir_passes import union_arms

from .annotations import BatchDuplicated
from .arguments import copy_same_layout, zeros_like_layout
from .bridge.frozen import as_dispatcher
from .colouring import colour_columns
from .modes import bound as run
from .modes.calls import bind
from .modes.forward import MAX_WIDTH, primal_ir
from .modes.hvp import products
from .sparsity import find_pattern, ones
from .star_colouring import colour_star, star_gather, symmetric

__all__ = ["SparseHessian", "SparseJacobian", "SparseJacobianWarning"]

REVERSE_COST = 2    # a reverse lane against a forward lane, for choosing rows over columns


class SparseJacobianWarning(UserWarning):
    """The sparsity pattern could not be found: the Jacobian is computed dense."""


class SparseJacobian:
    """The Jacobian of a kernel's output w.r.t. args[argnum] as a scipy.sparse.csr_matrix.

    `J = SparseJacobian(f)`, then `J(x, *const, out=None, **kwargs)` as `jacobian` takes them
    (f returns a float array, or writes `out`: f(x, out, *const)). `pattern`: a sparsity
    pattern given by hand (its nonzeros, output.size x x.size), used as it is: a pattern that
    misses a nonzero gives wrong values. `mode`: "forward" (columns coloured, forward sweeps),
    "reverse" (rows coloured, batched reverse sweeps) or None (rows where that takes under
    half as many colours). After a call: `pattern` (csr_matrix of ones), `by_rows`,
    `colours` (per column, or per row when by_rows), `ncolours`, `input_specific`, `decisions` ((instruction, reason)
    pairs on the inputs' values), `united` (both arms of each decision ran: the pattern holds
    for every input), `dense` (None, or why the Jacobian is computed dense),
    `detections` (how many times the pattern was found)."""

    def __init__(self, f, argnum: int = 0, pattern=None, mode=None):
        if not isinstance(argnum, (int, np.integer)) or isinstance(argnum, bool):
            raise TypeError(f"argnum must be an int, not {argnum!r}")
        if mode not in (None, "forward", "reverse"):
            raise ValueError(f"mode must be None, 'forward' or 'reverse', not {mode!r}")
        self.f, self.argnum, self.mode = f, int(argnum), mode
        self.by_rows = False
        self.pattern = None if pattern is None else ones(sp.csr_matrix(pattern))
        self.given = pattern is not None
        self.colours = None
        self.input_specific = False
        self.united = False
        self.decisions: list = []
        self.dense = None
        self.detections = 0
        self._seen = None       # (shapes, copies of the other arguments) the pattern is for
        self._shape = None
        self._made = None       # (pattern, by_rows, seeds, gather) of _plan
        self._analysed = {}     # argument types -> (ir_passes' Decisions, united, free)
        self._free = ()         # Const arrays whose values cannot change the pattern

    @property
    def ncolours(self) -> int:
        return 0 if self.colours is None else int(self.colours.max(initial=-1)) + 1

    def __call__(self, x, *const, out=None, **kwargs):
        args = (x,) + tuple(const)
        n = _position(self.argnum, len(args))
        xs = args[n]
        if not isinstance(xs, np.ndarray) or xs.dtype.kind != "f":
            raise TypeError(f"sparse Jacobian: argument {n} must be a real float array, not "
                            f"{type(xs).__name__}" + (f" of {xs.dtype}" if isinstance(xs, np.ndarray) else ""))
        seen = _snapshot(args, n, out, kwargs, self._free)
        if out is not None:
            shape = np.shape(out)
        elif self._seen is not None and _same(seen, self._seen):
            shape = self._shape
        else:
            shape = self._output_shape(args, kwargs)
        if self.pattern is None or (not self.given and (self.input_specific or
                                                        not _same(seen, self._seen))):
            self._detect(args, n, out, shape, kwargs)
            self._seen, self._shape = _snapshot(args, n, out, kwargs, self._free), shape
        elif self.colours is None:
            self._check_given(shape, xs.size)
            self._colour()
        return self._evaluate(args, n, out, shape, kwargs)

    # ---- the pattern ------------------------------------------------------------------------

    def _output_shape(self, args, kwargs):
        value = self.f(*_copies(args), **kwargs)
        if not (isinstance(value, np.ndarray) and value.dtype.kind == "f"):
            raise TypeError(f"sparse Jacobian: the kernel returns {type(value).__name__}; it "
                            f"takes a kernel returning a float array (or writing out=)")
        return value.shape

    def _detect(self, args, n, out, shape, kwargs):
        size, m = args[n].size, int(np.prod(shape))
        width = min(MAX_WIDTH, size)
        types = (width, tuple(numba.typeof(a) for a in args), None if out is None else
                 numba.typeof(out), tuple((k, numba.typeof(v)) for k, v in sorted(kwargs.items())))
        judged = self._analysed.get(types)
        if judged is None:       # the IR depends on the types only
            judged = self._analysed[types] = self._decisions(args, n, out, shape, width, kwargs)
        found, self.united, free = judged
        self._free = free if self.united or not found.decisions else ()
        self.detections += 1
        self.decisions = list(found.decisions)
        self.input_specific = found.input_specific and not self.united
        if found.blockers:
            text, reason = found.blockers[0]
            self.dense = f"{reason}: {text}"
            warnings.warn(SparseJacobianWarning(
                f"no sparsity pattern for {getattr(self.f, '__name__', self.f)}: {self.dense}; "
                f"the Jacobian is computed dense"), stacklevel=3)
            self.pattern = ones(sp.csr_matrix(np.ones((m, size))))
            self.by_rows = self.mode == "reverse" or (self.mode is None and
                                                      REVERSE_COST * m < size)
            self.colours = np.arange(m if self.by_rows else size)
            return
        self.dense = None
        seeds = [zeros_like_layout(args[n]) for _ in range(width)]

        def run_lanes(sets):
            for s in seeds:
                s[...] = 0.0
            for s, members in zip(seeds, sets):
                s.flat[members] = np.nan
            ys = self._sweep(args, n, out, shape, seeds, kwargs,
                             rerun="pattern" if self.united else False)
            return np.array([np.isnan(np.ravel(ys[k])) for k in range(len(sets))]).reshape(len(sets), m)

        try:
            self.pattern = find_pattern(run_lanes, size, m, width)
        except InternalError:
            raise
        except Exception:       # noqa: BLE001 - an arm run on the way not taken failed
            if not self.united:
                raise
            self.united, self.input_specific = False, True
            self._analysed[types] = (found, False, ())
            self._free = ()
            self.pattern = find_pattern(run_lanes, size, m, width)
        self._colour()

    def _colour(self):
        """Columns coloured for forward sweeps, or rows for reverse sweeps where the mode
        asks for it or (mode None) that takes under 1/REVERSE_COST as many colours."""
        columns = None if self.mode == "reverse" else colour_columns(self.pattern)
        rows = None if self.mode == "forward" else colour_columns(self.pattern.T.tocsr())
        self.by_rows = columns is None or (rows is not None and REVERSE_COST * (
            rows.max(initial=-1) + 1) < columns.max(initial=-1) + 1)
        self.colours = rows if self.by_rows else columns

    def _decisions(self, args, n, out, shape, width, kwargs):
        """(Decisions, united, positions of the float Const arrays whose values reach no
        decision: a new value of theirs keeps the pattern)."""
        def judge(consts):
            anns = self._annotations(args, n, out, [zeros_like_layout(args[n]) for _ in range(width)],
                                     consts)
            bound = bind(as_dispatcher(self.f), tuple(anns), kwargs)
            target, targs, _ = run.forward_target(bound, None if out is not None else [shape])
            return _judge(*primal_ir(target, *targs), unite=not consts)
        found, united = judge(())
        return found, united, _free(args, n, found, judge)

    def _check_given(self, shape, size):
        want = (int(np.prod(shape)), size)
        if self.pattern.shape != want:
            raise ValueError(f"pattern has shape {self.pattern.shape}; this call's Jacobian is {want}")

    # ---- sweeps -----------------------------------------------------------------------------

    def _annotations(self, args, n, out, seeds, consts=()):
        """`consts`: positions of other arrays annotated as differentiated too (the analysis
        of what their values reach)."""
        anns = [copy_same_layout(a) if isinstance(a, np.ndarray) else a for a in args]
        anns[n] = BatchDuplicated(copy_same_layout(args[n]), tuple(seeds))
        for i in consts:
            anns[i] = BatchDuplicated(anns[i], tuple(zeros_like_layout(args[i]) for _ in seeds))
        if out is not None:
            dys = tuple(zeros_like_layout(out) for _ in seeds)
            anns.insert(1, BatchDuplicated(copy_same_layout(out), dys))
        return anns

    def _sweep(self, args, n, out, shape, seeds, kwargs, rerun=True):
        """Forward mode with these tangent lanes of args[n] on copies of the arguments: the
        output's tangent per lane. `rerun`: as bound.forward's."""
        anns = self._annotations(args, n, out, seeds)
        bound = bind(as_dispatcher(self.f), tuple(anns), kwargs)
        if out is None:
            return list(run.forward(bound, shapes=[shape], rerun=rerun))
        run.forward(bound, rerun=rerun)
        return list(anns[1].shadows)

    def _evaluate(self, args, n, out, shape, kwargs):
        x = args[n]
        m, size, k = int(np.prod(shape)), x.size, self.ncolours
        seeds, gather = self._plan(x, m, shape)
        if self.by_rows:
            y = np.zeros((max(k, 1), size))
            for start, chunk in zip(range(0, k, MAX_WIDTH), seeds):
                dxs = self._reverse_sweep(args, n, out, chunk, kwargs)
                for lane in range(min(MAX_WIDTH, k - start)):
                    y[start + lane] = np.ravel(dxs[lane])
            return self._matrix(y, gather, x, out, m, size)
        y = np.zeros((max(k, 1), m))
        width = len(seeds[0]) if seeds else 1
        lanes = [zeros_like_layout(x) for _ in range(width)]
        for start, chunk in zip(range(0, k, width), seeds):
            for s, t in zip(lanes, chunk):
                s[...] = t
            ys = self._sweep(args, n, out, shape, lanes, kwargs, rerun=False)
            if not all(np.isfinite(t).all() for t in ys):
                # inf or NaN: redone under the strong zero (modes/strong_zero.py), as jacobian
                for s, t in zip(lanes, chunk):
                    s[...] = t
                ys = self._sweep(args, n, out, shape, lanes, kwargs)
            for lane in range(min(width, k - start)):
                y[start + lane] = np.ravel(ys[lane])
        return self._matrix(y, gather, x, out, m, size)

    def _matrix(self, y, gather, x, out, m, size):
        p = self.pattern
        dtype = np.result_type(x.dtype, np.float64 if out is None else out.dtype)
        data = y.ravel()[gather].astype(dtype)
        return sp.csr_matrix((data, p.indices.copy(), p.indptr.copy()), shape=(m, size))

    def _plan(self, x, m, shape):
        """(per chunk of 16 colours, the seed of each lane: x's tangents, or the output's
        seeds when by rows; per stored entry of the pattern, its place in the compressed
        results), made once per pattern."""
        if self._made is not None and self._made[0] is self.pattern and \
                self._made[1] == self.by_rows:
            return self._made[2:]
        k = self.ncolours
        width = min(MAX_WIDTH, max(k, 1))
        like = np.zeros(shape) if self.by_rows else np.zeros(x.shape, x.dtype)
        seeds = []
        for start in range(0, k, width):
            chunk = [np.zeros_like(like) for _ in range(width)]
            for lane, c in enumerate(range(start, min(start + width, k))):
                chunk[lane].flat[np.flatnonzero(self.colours == c)] = 1.0
            seeds.append(chunk)
        gather = self._gather(m, x.size)
        self._made = (self.pattern, self.by_rows, seeds, gather)
        return seeds, gather

    def _gather(self, m, size):
        """Per stored entry of the pattern, its place in the compressed results (colour-major,
        rows of length m; of length size when by rows)."""
        p = self.pattern
        rows = np.repeat(np.arange(m), np.diff(p.indptr))
        if self.by_rows:
            return self.colours[rows] * size + p.indices
        return self.colours[p.indices] * m + rows

    def _reverse_sweep(self, args, n, out, seeds, kwargs):
        """Batched reverse mode seeded with these output lanes, on copies of the arguments:
        the derivative of each lane's weighted output sum w.r.t. args[n]."""
        anns = [copy_same_layout(a) if isinstance(a, np.ndarray) else a for a in args]
        dxs = tuple(zeros_like_layout(args[n]) for _ in seeds)
        anns[n] = BatchDuplicated(copy_same_layout(args[n]), dxs)
        if out is None:
            run.batched(bind(as_dispatcher(self.f), tuple(anns), kwargs), list(seeds),
                        len(seeds))
        else:
            dys = tuple(zeros_like_layout(out) for _ in seeds)
            for d, s in zip(dys, seeds):
                d[...] = s
            anns.insert(1, BatchDuplicated(copy_same_layout(out), dys))
            run.batched(bind(as_dispatcher(self.f), tuple(anns), kwargs), None)
        return dxs


def _judge(text, name, activity, unite=True):
    """(ir_passes' Decisions, whether running both arms of each decision leaves none: then
    the NaN runs use that code, transforms/pattern_union.py, and the pattern holds for every
    input)."""
    found = decisions(parse_module(text), name, activity)
    if not found.decisions or found.blockers or not unite:
        return found, False
    module = parse_module(text)
    made = union_arms(module, name, activity)
    return found, not decisions(module, name, activity, ignore=made).decisions


def _free(args, n, found, judge) -> tuple:
    """The positions of the float Const arrays when, differentiated along with args[n], they
    add no decision to `found` (then their values cannot change the pattern); else ()."""
    consts = tuple(i for i, a in enumerate(args) if i != n and isinstance(a, np.ndarray)
                   and a.dtype.kind == "f" and a.size)
    if not consts or found.blockers:
        return ()
    try:
        wider = judge(consts)[0]
    except Exception:       # noqa: BLE001 - not analysable as differentiated: keep the values
        return ()
    return consts if len(wider.decisions) == len(found.decisions) and not wider.blockers else ()


def _position(argnum, nargs):
    if not -nargs <= argnum < nargs:
        raise ValueError(f"argnum {argnum} is out of range for {nargs} positional arguments")
    return argnum % nargs


def _copies(args):
    return tuple(copy_same_layout(a) if isinstance(a, np.ndarray) else a for a in args)


def _snapshot(args, n, out, kwargs, free=()):
    """What the pattern depends on beyond args[n]'s values: every shape and dtype, the other
    arguments' values (of those at positions `free`, shape and dtype only)."""
    def keep(v):
        if isinstance(v, np.ndarray):
            return ("array", v.shape, v.dtype.str, v.copy())
        if isinstance(v, tuple):
            return ("tuple",) + tuple(keep(u) for u in v)
        return ("value", type(v), v)
    others = tuple(("x", a.shape, a.dtype.str) if i == n or i in free else keep(a)
                   for i, a in enumerate(args))
    return (others, None if out is None else (out.shape, out.dtype.str),
            tuple((k, keep(kwargs[k])) for k in sorted(kwargs)))


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and \
            bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


class SparseHessian(SparseJacobian):
    """The Hessian of a scalar kernel f(x, *const) w.r.t. x as a scipy.sparse.csr_matrix
    (x.size x x.size, C order): the Jacobian of the gradient, found and compressed as
    SparseJacobian's, with Hessian-vector products (forward over reverse, modes/hvp.py) for
    the forward sweeps. The pattern is made symmetric and gets a star colouring
    (star_colouring.py: an entry is read from B[i, c(j)] or B[j, c(i)]) where that takes fewer
    colours than a column colouring (`star` says which). `H = SparseHessian(f)`, then
    `H(x, *const, **kwargs)`."""

    def __init__(self, f, pattern=None, memory="tape"):
        super().__init__(f, 0, pattern, "forward")
        self.memory = memory
        self.star = False

    def _colour(self):
        self.pattern = ones(symmetric(self.pattern))
        self.colours = colour_columns(self.pattern)
        star = colour_star(self.pattern)
        self.star = star is not None and star.max(initial=-1) < self.colours.max(initial=-1)
        if self.star:
            self.colours = star

    def _gather(self, m, size):
        if self.star:
            return star_gather(self.pattern, self.colours, m)
        return super()._gather(m, size)

    def __call__(self, x, *const, **kwargs):
        return super().__call__(x, *const, **kwargs)

    def _output_shape(self, args, kwargs):
        return args[0].shape

    def _decisions(self, args, n, out, shape, width, kwargs):
        def judge(consts):
            anns = [BatchDuplicated(copy_same_layout(a), tuple(zeros_like_layout(a)
                                                               for _ in range(width)))
                    if i == 0 or i in consts else a for i, a in enumerate(args)]
            bound = bind(as_dispatcher(self.f), tuple(anns), kwargs)
            target, targs, _ = run.forward_target(bound)
            return _judge(*primal_ir(target, *targs), unite=False)
        found = judge(())[0]
        return found, False, _free(args, 0, found, judge)

    def _sweep(self, args, n, out, shape, seeds, kwargs, rerun=True):
        return list(products(self.f, args[0], [copy_same_layout(s) for s in seeds],
                             list(args[1:]), kwargs, self.memory, rerun))
