"""Workload: the RNN of workload 2 written as Numba users write it, with `@` (BLAS gemv).

    for t in range(T):  h[:] = np.tanh(W @ h + U @ xs[t] + b)      (h overwritten each step)
    loss = <v, h_T>

64 hidden units, input 32, 100 steps. Gradient w.r.t. W, U and xs. The products are
differentiated by the gemv record (ir_passes/rules/blas.py): the state h that each product reads
is overwritten afterwards, so the forward sweep copies it into the arena (docs/linalg.md).
"""
import numpy as np
from numba import njit

from . import rnn
from ..harness import Instance

NAME = "rnn_matmul"
TITLE = "RNN with @ (gemv)"


@njit
def kernel(W, U, b, xs, h, v):
    for t in range(xs.shape[0]):
        h[:] = np.tanh(W @ h + U @ xs[t] + b)
    return np.dot(v, h)


def setup(quick=False, H=64, nin=32, T=100):
    args, note = rnn.arguments(quick, H, nin, T)
    return Instance(kernel, args, note=note)


jax_setup = rnn.jax_setup        # the same lax.scan RNN
