"""Batched reverse mode called again and again on fresh arrays (enzyme_py.jax, enzyme_py.torch).

`autodiff` with BatchDuplicated checks every argument and every pair of seeds on each call
(about 0.7 ms for 16 seeds of a two-array kernel, arguments.py). A framework's batching rule
hands the kernel arrays it has just copied or views of distinct tensors, and seeds it allocated:
the first call of a layout goes through `autodiff` (the checks, the build), later calls of that
layout, when no two arrays may share memory, straight to its compiled entry (modes/batched.py),
under the same strong-zero rerun as `autodiff` (modes/strong_zero.py).
"""
from __future__ import annotations

import numpy as np

from .annotations import Active, BatchDuplicated, Const
from .arguments import typeof, zeros_like_layout
from .modes import batched, strong_zero
from .modes.forward import MAX_WIDTH

DUP, ACTIVE, CONST = "dup", "active", "const"


def _overlap(args) -> bool:
    """Whether two array arguments may share memory (the entry built for apart arrays would
    then be wrong for them)."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    return any(np.may_share_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:])


class BatchedReverse:
    """Batched reverse mode of one kernel, its compiled entries kept per layout and width."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.entries = {}

    def __call__(self, make_args, kinds, shadows, seeds=None):
        """`make_args()`: fresh kernel arguments; `kinds`: per argument DUP, ACTIVE or CONST;
        `shadows`: {position: array with a leading axis of k}, for each DUP argument, holding
        its k seeds, accumulated in place lane by lane; `seeds`: the return value's k seeds (None:
        no return value). Returns {ACTIVE position: its k derivatives}. More than 16 lanes run
        in chunks of 16, each on fresh arguments."""
        k = len(next(iter(shadows.values())))
        out = {p: [] for p, kind in enumerate(kinds) if kind == ACTIVE}
        for start in range(0, k, MAX_WIDTH):
            stop = min(k, start + MAX_WIDTH)
            derivs = self._chunk(make_args(), kinds, {p: s[start:stop] for p, s in shadows.items()},
                                 tuple(seeds[start:stop]) if seeds is not None else (0.0,) * (stop - start))
            for p in out:
                out[p].extend(derivs[p])
        return out

    def _chunk(self, args, kinds, lanes, seeds):
        ann = [BatchDuplicated(a, tuple(lanes[p])) if kind == DUP else Active(a) if kind == ACTIVE
               else Const(a) for p, (a, kind) in enumerate(zip(args, kinds))]
        key = (len(seeds),) + tuple(typeof(i, a) for i, a in enumerate(args))
        c = None if _overlap(args) else self.entries.get(key)
        if c is None:       # a new layout, or arrays that may alias: autodiff's checks decide
            result = batched.autodiff(self.kernel, *ann, seed=seeds)
            if not _overlap(args):
                self.entries[key] = batched.compile_batched(self.kernel, *ann)
            return {p: result[p] for p, kind in enumerate(kinds) if kind == ACTIVE}
        dup = [p for p, kind in enumerate(kinds) if kind == DUP]
        scratch = [zeros_like_layout(args[p]) for p in dup]
        flat = [row for p in dup for row in lanes[p]]
        derivs = strong_zero.call(self.kernel, c.entry, lambda: self._guarded(ann), list(args),
                                  scratch + flat, tuple(float(s) for s in seeds))
        return {p: tuple(d) for p, d in zip(c.spec.active_positions, derivs)}

    def _guarded(self, ann):
        return batched.compile_batched(self.kernel, *ann, guarded=True).entry
