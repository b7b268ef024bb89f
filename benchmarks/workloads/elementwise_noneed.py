"""Workload 1b: workload 1 when the caller needs only the gradient, not y.

y is DuplicatedNoNeed, Enzyme's annotation for an output whose primal value is not needed: the
gradient skips y's stores, and with them the `sin` that only fed y (ir_passes/transforms/
noneed.py). The hand adjoint likewise computes only dx += dy (2x + cos x) and dy = 0. The peers
are workload 1's: their gradients never materialize y either.
"""
import math

import numpy as np
from numba import njit

from ..harness import Arg, Hand, Instance
from .elementwise import data, jax_setup, kernel, torch_setup, warp_setup  # noqa: F401

NAME = "elementwise_noneed"
TITLE = "elementwise, y not needed"


@njit
def hand_adjoint(x, dx, dy):
    for i in range(x.shape[0]):
        xi = x[i]
        dx[i] += dy[i] * (2.0 * xi + math.cos(xi))
        dy[i] = 0.0


def setup(quick=False, n=None):
    n, x, w = data(quick, n)
    args = [Arg("dup", x, name="x"),
            Arg("dup", np.zeros(n), seed=w, wrt=False, name="y", need=False)]
    hx, hdx, hdy = x.copy(), np.zeros(n), w.copy()

    def reset():
        hdx.fill(0.0)
        np.copyto(hdy, w)

    hand = Hand(lambda: hand_adjoint(hx, hdx, hdy), reset, lambda: hdx.copy())
    return Instance(kernel, args, hand=hand, note=f"n={n}, y DuplicatedNoNeed")
