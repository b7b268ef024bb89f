"""Workload: the RNN of workload 2 written as Numba users write it, with `@` (BLAS gemv).

    for t in range(T):  h[:] = np.tanh(W @ h + U @ xs[t] + b)      (h overwritten each step)
    loss = <v, h_T>

64 hidden units, input 32, 100 steps. Gradient w.r.t. W, U and xs. The products are
differentiated by the gemv record (ir_passes/rules/blas.py): the state h that each product reads
is overwritten afterwards, so the forward sweep copies it into the arena (docs/linalg.md).
"""
import math

import numpy as np
from numba import njit

from ..harness import Arg, Instance

NAME = "rnn_matmul"
TITLE = "RNN with @ (gemv)"


@njit
def kernel(W, U, b, xs, h, v):
    for t in range(xs.shape[0]):
        h[:] = np.tanh(W @ h + U @ xs[t] + b)
    return np.dot(v, h)


def setup(quick=False, H=64, nin=32, T=100):
    if quick:
        H, nin, T = 16, 8, 20
    rng = np.random.default_rng(2)
    W = rng.standard_normal((H, H)) / math.sqrt(H)
    U = rng.standard_normal((H, nin)) / math.sqrt(nin)
    b = 0.1 * rng.standard_normal(H)
    xs = rng.standard_normal((T, nin))
    h0 = 0.1 * rng.standard_normal(H)
    v = rng.standard_normal(H)
    args = [Arg("dup", W, name="W"), Arg("dup", U, name="U"), Arg("const", b, name="b"),
            Arg("dup", xs, name="xs"), Arg("dup", h0, wrt=False, name="h"),
            Arg("const", v, name="v")]
    return Instance(kernel, args, note=f"H={H} in={nin} T={T}")


def jax_setup(inst):
    import jax
    import jax.numpy as jnp
    W, U, b, xs, h0, v = (jnp.asarray(a.init) for a in inst.spec)

    def f(W, U, xs):
        def step(h, x):
            return jnp.tanh(W @ h + U @ x + b), None
        h, _ = jax.lax.scan(step, h0, xs)
        return jnp.dot(v, h)
    fwd = jax.jit(f)
    g = jax.jit(jax.grad(f, argnums=(0, 1, 2)))

    def result():
        return np.concatenate([np.asarray(r).ravel() for r in g(W, U, xs)])
    return (lambda: fwd(W, U, xs).block_until_ready()), \
        (lambda: jax.block_until_ready(g(W, U, xs))), result
