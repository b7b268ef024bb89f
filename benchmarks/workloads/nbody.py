"""Workload 7: 2-D N-body forces, N = 1000 (all pairs, softened gravity).

    F_i = sum_{j != i} m_i m_j (r_j - r_i) / (|r_j - r_i|^2 + eps^2)^{3/2}

The kernel writes fx, fy. L = <wx, fx> + <wy, fy> (random seeds); derivative w.r.t. the
positions and the masses. The hand adjoint recomputes each pair in one fused pass.
"""
import numpy as np
from numba import njit

from ..harness import Arg, Hand, Instance

NAME = "nbody"
TITLE = "2-D N-body forces"

EPS2 = 1e-2


@njit
def kernel(px, py, m, fx, fy):
    n = px.shape[0]
    for i in range(n):
        ax = 0.0
        ay = 0.0
        for j in range(n):
            if j == i:
                continue
            dx = px[j] - px[i]
            dy = py[j] - py[i]
            r2 = dx * dx + dy * dy + EPS2
            inv3 = 1.0 / (r2 * np.sqrt(r2))
            s = m[j] * inv3
            ax += s * dx
            ay += s * dy
        fx[i] = m[i] * ax
        fy[i] = m[i] * ay


@njit
def hand_adjoint(px, py, m, fx, fy, dpx, dpy, dm, dfx, dfy):
    n = px.shape[0]
    for i in range(n):
        gx = dfx[i]
        gy = dfy[i]
        mi = m[i]
        ax = 0.0
        ay = 0.0
        gxi = 0.0
        gyi = 0.0
        dmi = 0.0
        for j in range(n):
            if j == i:
                continue
            dx = px[j] - px[i]
            dy = py[j] - py[i]
            r2 = dx * dx + dy * dy + EPS2
            inv3 = 1.0 / (r2 * np.sqrt(r2))
            mj = m[j]
            ax += mj * inv3 * dx
            ay += mj * inv3 * dy
            # F_i = mi*mj*inv3*(dx, dy);  g.F_i contributions
            proj = gx * dx + gy * dy
            c = mi * mj * inv3
            k = -3.0 * c * proj / r2           # d(c*proj)/dr2 * 2 ... folded: dr2/ddx = 2 dx
            ddx = c * gx + k * dx
            ddy = c * gy + k * dy
            dpx[j] += ddx
            dpy[j] += ddy
            gxi -= ddx
            gyi -= ddy
            t = inv3 * proj
            dmi += mj * t
            dm[j] += mi * t
        dpx[i] += gxi
        dpy[i] += gyi
        dm[i] += dmi
        fx[i] = mi * ax
        fy[i] = mi * ay
        dfx[i] = 0.0
        dfy[i] = 0.0


def setup(quick=False, n=None):
    n = n or (100 if quick else 1000)
    rng = np.random.default_rng(7)
    px = rng.uniform(-1.0, 1.0, n)
    py = rng.uniform(-1.0, 1.0, n)
    m = rng.uniform(0.5, 1.5, n)
    wx = rng.standard_normal(n)
    wy = rng.standard_normal(n)
    args = [Arg("dup", px, name="px"), Arg("dup", py, name="py"), Arg("dup", m, name="m"),
            Arg("dup", np.zeros(n), seed=wx, wrt=False, name="fx"),
            Arg("dup", np.zeros(n), seed=wy, wrt=False, name="fy")]
    B = {k: np.zeros(n) for k in ("fx", "fy", "dpx", "dpy", "dm", "dfx", "dfy")}

    def reset():
        for k in ("dpx", "dpy", "dm"):
            B[k].fill(0.0)
        np.copyto(B["dfx"], wx)
        np.copyto(B["dfy"], wy)

    def call():
        hand_adjoint(px, py, m, B["fx"], B["fy"], B["dpx"], B["dpy"], B["dm"], B["dfx"],
                     B["dfy"])

    def result():
        return np.concatenate([B["dpx"], B["dpy"], B["dm"]])
    return Instance(kernel, args, hand=Hand(call, reset, result), note=f"N={n}")


def jax_setup(inst):
    import jax
    import jax.numpy as jnp
    px, py, m = (jnp.asarray(inst.spec[k].init) for k in range(3))
    wx, wy = jnp.asarray(inst.spec[3].seed), jnp.asarray(inst.spec[4].seed)
    n = px.shape[0]
    offdiag = ~jnp.eye(n, dtype=bool)

    def forces(px, py, m):
        dx = px[None, :] - px[:, None]
        dy = py[None, :] - py[:, None]
        r2 = dx * dx + dy * dy + EPS2
        s = jnp.where(offdiag, m[None, :] / (r2 * jnp.sqrt(r2)), 0.0)
        return m * jnp.sum(s * dx, axis=1), m * jnp.sum(s * dy, axis=1)

    def f(px, py, m):
        fx, fy = forces(px, py, m)
        return jnp.dot(wx, fx) + jnp.dot(wy, fy)
    fwd = jax.jit(forces)
    g = jax.jit(jax.grad(f, argnums=(0, 1, 2)))

    def result():
        return np.concatenate([np.asarray(r) for r in g(px, py, m)])
    return (lambda: jax.block_until_ready(fwd(px, py, m))), \
        (lambda: jax.block_until_ready(g(px, py, m))), result


def torch_setup(inst):
    import torch
    px0, py0, m0 = (torch.from_numpy(inst.spec[k].init.copy()) for k in range(3))
    wx, wy = (torch.from_numpy(inst.spec[k].seed.copy()) for k in (3, 4))
    n = px0.shape[0]
    offdiag = ~torch.eye(n, dtype=torch.bool)

    def forces(px, py, m):
        dx = px[None, :] - px[:, None]
        dy = py[None, :] - py[:, None]
        r2 = dx * dx + dy * dy + EPS2
        s = torch.where(offdiag, m[None, :] / (r2 * torch.sqrt(r2)), 0.0)
        return m * torch.sum(s * dx, dim=1), m * torch.sum(s * dy, dim=1)

    def fwd():
        with torch.no_grad():
            return forces(px0, py0, m0)

    def grad():
        args = [a.detach().requires_grad_(True) for a in (px0, py0, m0)]
        fx, fy = forces(*args)
        return torch.autograd.grad(torch.dot(wx, fx) + torch.dot(wy, fy), args)

    def result():
        return np.concatenate([g.numpy() for g in grad()])
    return fwd, grad, result


def warp_setup(inst):
    import warp as wp
    from ._warp_kernels import nbody
    px, py, m = (wp.array(inst.spec[k].init, dtype=wp.float64, device="cpu",
                          requires_grad=True) for k in range(3))
    n = inst.spec[0].init.shape[0]
    fx, fy = (wp.zeros(n, dtype=wp.float64, device="cpu", requires_grad=True) for _ in range(2))
    wx, wy = (wp.array(inst.spec[k].seed, dtype=wp.float64, device="cpu") for k in (3, 4))

    def forward():
        fx.zero_()
        fy.zero_()
        wp.launch(nbody, dim=n, inputs=[px, py, m], outputs=[fx, fy], device="cpu")

    tape = wp.Tape()

    def grad():
        tape.reset()                   # drops the recorded launches, zeroes the gradients
        with tape:
            forward()
        tape.backward(grads={fx: wx, fy: wy})

    def result():
        grad()
        return np.concatenate([px.grad.numpy(), py.grad.numpy(), m.grad.numpy()])
    return forward, grad, result
