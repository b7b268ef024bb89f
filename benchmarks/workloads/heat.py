"""Workload 3: the 1-D explicit heat equation, updated in place, Active diffusivity.

    for each step:  u[i] <- u[i] + r (u[i-1] - 2 u[i] + u[i+1]),  i = 1..n-2  (ends fixed)
    with r = alpha * dt / dx^2; the update walks left to right keeping the old left
    neighbour in a scalar. L = <w, u_final>; derivative w.r.t. alpha and the initial u.

n = 1e5, 100 steps. The reverse sweep needs every overwritten state (80 MB of tape). The hand
adjoint keeps a preallocated full tape (steps x n).
"""
import numpy as np
from numba import njit

from ..harness import Arg, Hand, Instance

NAME = "heat"
TITLE = "heat eq. in place, Active alpha"

DT_OVER_DX2 = 0.5


@njit
def kernel(u, alpha, steps):
    n = u.shape[0]
    r = alpha * DT_OVER_DX2
    for s in range(steps):
        left = u[0]
        for i in range(1, n - 1):
            ui = u[i]
            u[i] = ui + r * (left - 2.0 * ui + u[i + 1])
            left = ui


@njit
def hand_adjoint(u, alpha, steps, du, tape, gb):
    """Forward storing each step's input state in `tape` (steps, n), then the reverse
    sweep with `gb` (n) as a second adjoint buffer. du enters holding dL/du_final and leaves
    holding dL/du_initial. Returns dL/dalpha. Needs n >= 5. (Indices are written k + 1 so
    that no index can be negative: Numba's wraparound check stops vectorization.)"""
    n = u.shape[0]
    r = alpha * DT_OVER_DX2
    for s in range(steps):
        t = tape[s]
        for i in range(n):
            t[i] = u[i]
        for k in range(n - 2):
            u[k + 1] = t[k + 1] + r * (t[k] - 2.0 * t[k + 1] + t[k + 2])
    dr = 0.0
    c = 1.0 - 2.0 * r
    ga = du
    g = gb
    for s in range(steps - 1, -1, -1):
        # u_new[i] = u[i] + r*lap_i for interior i; ga holds dL/du_new
        t = tape[s]
        acc = 0.0
        for k in range(n - 2):
            acc += ga[k + 1] * (t[k] - 2.0 * t[k + 1] + t[k + 2])
        dr += acc
        g[0] = ga[0] + r * ga[1]
        g[1] = ga[1] * c + r * ga[2]
        for k in range(n - 4):
            g[k + 2] = ga[k + 2] * c + r * (ga[k + 1] + ga[k + 3])
        g[n - 2] = ga[n - 2] * c + r * ga[n - 3]
        g[n - 1] = ga[n - 1] + r * ga[n - 2]
        ga, g = g, ga
    if steps % 2 == 1:
        for i in range(n):
            du[i] = ga[i]
    return dr * DT_OVER_DX2


def setup(quick=False, n=None, steps=None):
    n = n or (2_000 if quick else 100_000)
    steps = steps or (10 if quick else 100)
    rng = np.random.default_rng(3)
    xs = np.linspace(0.0, 1.0, n)
    u0 = np.sin(np.pi * xs) + 0.1 * rng.standard_normal(n)
    w = rng.standard_normal(n)
    alpha = 0.8
    args = [Arg("dup", u0, seed=w, name="u"), Arg("active", alpha, name="alpha"),
            Arg("const", steps, name="steps")]
    hu, hdu, tape, gb = u0.copy(), w.copy(), np.zeros((steps, n)), np.zeros(n)
    out = [0.0]

    def reset():
        np.copyto(hu, u0)
        np.copyto(hdu, w)

    def call():
        out[0] = hand_adjoint(hu, alpha, steps, hdu, tape, gb)

    def result():
        return np.concatenate([hdu, [out[0]]])
    return Instance(kernel, args, hand=Hand(call, reset, result), note=f"n={n} steps={steps}")


def jax_setup(inst):
    import jax
    import jax.numpy as jnp
    u0 = jnp.asarray(inst.spec[0].init)
    w = jnp.asarray(inst.spec[0].seed)
    alpha = inst.spec[1].init
    steps = inst.spec[2].init

    def f(u, alpha):
        r = alpha * DT_OVER_DX2

        def step(u, _):
            lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
            return u.at[1:-1].add(r * lap), None
        u, _ = jax.lax.scan(step, u, None, length=steps)
        return jnp.dot(w, u)
    fwd = jax.jit(f)
    g = jax.jit(jax.grad(f, argnums=(0, 1)))

    def result():
        du, da = g(u0, alpha)
        return np.concatenate([np.asarray(du), [float(da)]])
    return (lambda: fwd(u0, alpha).block_until_ready()), \
        (lambda: jax.block_until_ready(g(u0, alpha))), result


def torch_setup(inst):
    import torch
    u0 = torch.from_numpy(inst.spec[0].init.copy())
    w = torch.from_numpy(inst.spec[0].seed.copy())
    alpha0 = float(inst.spec[1].init)
    steps = inst.spec[2].init

    def f(u, alpha):
        r = alpha * DT_OVER_DX2
        for _ in range(steps):
            lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
            u = torch.cat([u[:1], u[1:-1] + r * lap, u[-1:]])
        return torch.dot(w, u)

    def fwd():
        with torch.no_grad():
            return f(u0, torch.tensor(alpha0, dtype=torch.float64))

    def grad():
        u = u0.detach().requires_grad_(True)
        a = torch.tensor(alpha0, dtype=torch.float64, requires_grad=True)
        return torch.autograd.grad(f(u, a), (u, a))

    def result():
        du, da = grad()
        return np.concatenate([du.numpy(), [float(da)]])
    return fwd, grad, result


def warp_setup(inst):
    import warp as wp
    from ._warp_kernels import heat_step
    u0 = inst.spec[0].init
    n = u0.shape[0]
    steps = inst.spec[2].init
    # one array per state: Warp's tape cannot differentiate an array overwritten in place
    us = [wp.array(u0, dtype=wp.float64, device="cpu", requires_grad=True)] + \
        [wp.zeros(n, dtype=wp.float64, device="cpu", requires_grad=True) for _ in range(steps)]
    alpha = wp.array([inst.spec[1].init], dtype=wp.float64, device="cpu", requires_grad=True)
    w = wp.array(inst.spec[0].seed, dtype=wp.float64, device="cpu")

    def forward():
        for s in range(steps):
            wp.launch(heat_step, dim=n, inputs=[us[s], alpha], outputs=[us[s + 1]],
                      device="cpu")

    tape = wp.Tape()

    def grad():
        tape.reset()                   # drops the recorded launches, zeroes the gradients
        with tape:
            forward()
        tape.backward(grads={us[-1]: w})

    def result():
        grad()
        return np.concatenate([us[0].grad.numpy(), alpha.grad.numpy()])
    return forward, grad, result
