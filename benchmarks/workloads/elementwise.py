"""Workload 1: elementwise y[i] = x[i]*x[i] + sin(x[i]), n = 1e6, float64.

Gradient: L = <w, y>; dx = w * (2x + cos x). The hand adjoint fuses the primal and the
adjoint in one pass (it also writes y and zeroes the consumed seed, as the contract asks).
"""
import math

import numpy as np
from numba import njit

from ..harness import Arg, Hand, Instance

NAME = "elementwise"
TITLE = "elementwise x*x+sin(x)"


@njit
def kernel(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i] + math.sin(x[i])


@njit
def hand_adjoint(x, y, dx, dy):
    for i in range(x.shape[0]):
        xi = x[i]
        y[i] = xi * xi + math.sin(xi)
        dx[i] += dy[i] * (2.0 * xi + math.cos(xi))
        dy[i] = 0.0


def data(quick=False, n=None):
    """(n, x, w): the input and the seed on y."""
    n = n or (10_000 if quick else 1_000_000)
    rng = np.random.default_rng(1)
    return n, rng.uniform(-2.0, 2.0, n), rng.standard_normal(n)


def setup(quick=False, n=None):
    n, x, w = data(quick, n)
    args = [Arg("dup", x, name="x"), Arg("dup", np.zeros(n), seed=w, wrt=False, name="y")]
    hx, hy, hdx, hdy = x.copy(), np.zeros(n), np.zeros(n), w.copy()

    def reset():
        np.copyto(hx, x)
        hdx.fill(0.0)
        np.copyto(hdy, w)

    hand = Hand(lambda: hand_adjoint(hx, hy, hdx, hdy), reset, lambda: hdx.copy())
    return Instance(kernel, args, hand=hand, note=f"n={n}")


# ---- peers -----------------------------------------------------------------------------

def jax_setup(inst):
    import jax
    import jax.numpy as jnp
    x0 = inst.spec[0].init
    w = jnp.asarray(inst.spec[1].seed)

    def f(x):
        return jnp.dot(w, x * x + jnp.sin(x))
    fwd = jax.jit(lambda x: x * x + jnp.sin(x))
    g = jax.jit(jax.grad(f))
    xj = jnp.asarray(x0)
    return (lambda: fwd(xj).block_until_ready()), (lambda: g(xj).block_until_ready()), \
        (lambda: np.asarray(g(xj)))


def torch_setup(inst):
    import torch
    x = torch.from_numpy(inst.spec[0].init.copy())
    w = torch.from_numpy(inst.spec[1].seed.copy())

    def fwd():
        with torch.no_grad():
            return x * x + torch.sin(x)

    def grad():
        xr = x.detach().requires_grad_(True)
        y = xr * xr + torch.sin(xr)
        return torch.autograd.grad(y, xr, grad_outputs=w)[0]
    return fwd, grad, (lambda: grad().numpy())


def warp_setup(inst):
    import warp as wp
    from ._warp_kernels import elementwise as k
    n = inst.spec[0].init.shape[0]
    x = wp.array(inst.spec[0].init, dtype=wp.float64, device="cpu", requires_grad=True)
    y = wp.zeros(n, dtype=wp.float64, device="cpu", requires_grad=True)
    w = wp.array(inst.spec[1].seed, dtype=wp.float64, device="cpu")

    def fwd():
        wp.launch(k, dim=n, inputs=[x], outputs=[y], device="cpu")

    tape = wp.Tape()

    def grad():
        tape.reset()                   # drops the recorded launches, zeroes the gradients
        with tape:
            wp.launch(k, dim=n, inputs=[x], outputs=[y], device="cpu")
        tape.backward(grads={y: w})

    def result():
        grad()
        return x.grad.numpy().copy()
    return fwd, grad, result
