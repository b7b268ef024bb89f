"""Workload 2: an RNN updating its state array in place.

    for t in range(T):  h <- tanh(W h + U x_t + b)      (h overwritten each step)
    loss = <v, h_T>

64 hidden units, input 32, 100 steps. Gradient w.r.t. W, U and the inputs xs (b, v and the
initial state are not reported; h is Duplicated because its values depend on W and U).
The hand adjoint is BPTT with a preallocated tape of the T+1 states.
"""
import math

import numpy as np
from numba import njit

from ..harness import Arg, Hand, Instance

NAME = "rnn"
TITLE = "RNN in-place state"


@njit
def kernel(W, U, b, xs, h, v):
    T, nin = xs.shape
    H = h.shape[0]
    hnew = np.empty(H)
    for t in range(T):
        for i in range(H):
            acc = b[i]
            for j in range(H):
                acc += W[i, j] * h[j]
            for j in range(nin):
                acc += U[i, j] * xs[t, j]
            hnew[i] = math.tanh(acc)
        for i in range(H):
            h[i] = hnew[i]
    loss = 0.0
    for i in range(H):
        loss += v[i] * h[i]
    return loss


@njit
def hand_adjoint(W, U, b, xs, h, v, dW, dU, dxs, dh, seed, tape, g, gnew):
    """Forward with the states on `tape` (T+1, H), then BPTT. Returns the loss."""
    T, nin = xs.shape
    H = h.shape[0]
    for i in range(H):
        tape[0, i] = h[i]
    for t in range(T):
        for i in range(H):
            acc = b[i]
            for j in range(H):
                acc += W[i, j] * tape[t, j]
            for j in range(nin):
                acc += U[i, j] * xs[t, j]
            tape[t + 1, i] = math.tanh(acc)
    loss = 0.0
    for i in range(H):
        h[i] = tape[T, i]
        loss += v[i] * h[i]
    # reverse: g = dL/dh_t
    for i in range(H):
        g[i] = dh[i] + seed * v[i]
        dh[i] = 0.0
    for t in range(T - 1, -1, -1):
        for i in range(H):
            y = tape[t + 1, i]
            g[i] *= 1.0 - y * y                  # now dL/d(pre-activation)
        for j in range(H):
            gnew[j] = 0.0
        for i in range(H):
            gi = g[i]
            for j in range(H):
                dW[i, j] += gi * tape[t, j]
                gnew[j] += W[i, j] * gi
            for j in range(nin):
                dU[i, j] += gi * xs[t, j]
                dxs[t, j] += U[i, j] * gi
        for j in range(H):
            g[j] = gnew[j]
    for i in range(H):
        dh[i] += g[i]
    return loss


def arguments(quick=False, H=64, nin=32, T=100):
    """The RNN's arguments (W, U, b, xs, h, v), shared with rnn_matmul.py, and its size note."""
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
    return args, f"H={H} in={nin} T={T}"


def setup(quick=False, H=64, nin=32, T=100):
    args, note = arguments(quick, H, nin, T)
    W, U, b, xs, h0, v = (a.init for a in args)
    T, H = xs.shape[0], h0.shape[0]
    bufs = dict(W=W, U=U, b=b, xs=xs, h=h0.copy(), v=v, dW=np.zeros_like(W),
                dU=np.zeros_like(U), dxs=np.zeros_like(xs), dh=np.zeros(H),
                tape=np.zeros((T + 1, H)), g=np.zeros(H), gnew=np.zeros(H))

    def reset():
        np.copyto(bufs["h"], h0)
        for k in ("dW", "dU", "dxs", "dh"):
            bufs[k].fill(0.0)

    def call():
        B = bufs
        return hand_adjoint(B["W"], B["U"], B["b"], B["xs"], B["h"], B["v"], B["dW"],
                            B["dU"], B["dxs"], B["dh"], 1.0, B["tape"], B["g"], B["gnew"])

    def result():
        return np.concatenate([bufs["dW"].ravel(), bufs["dU"].ravel(), bufs["dxs"].ravel()])

    return Instance(kernel, args, hand=Hand(call, reset, result), note=note)


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


def torch_setup(inst):
    import torch
    W0, U0, b, xs0, h0, v = (torch.from_numpy(np.array(a.init, copy=True)) for a in inst.spec)

    def f(W, U, xs):
        h = h0
        for t in range(xs.shape[0]):
            h = torch.tanh(W @ h + U @ xs[t] + b)
        return torch.dot(v, h)

    def fwd():
        with torch.no_grad():
            return f(W0, U0, xs0)

    def grad():
        args = [a.detach().requires_grad_(True) for a in (W0, U0, xs0)]
        return torch.autograd.grad(f(*args), args)

    def result():
        return np.concatenate([g.numpy().ravel() for g in grad()])
    return fwd, grad, result


def warp_setup(inst):
    import warp as wp
    from ._warp_kernels import rnn_act, rnn_pre
    W0, U0, b0, xs0, h0, v0 = (a.init for a in inst.spec)
    T, nin = xs0.shape
    H = h0.shape[0]

    def arr(a, grad=True):
        return wp.array(a, dtype=wp.float64, device="cpu", requires_grad=grad)
    W, U, xs = arr(W0), arr(U0), arr(xs0)
    b = arr(b0, False)
    hs0 = np.zeros((T + 1, H))
    hs0[0] = h0
    hs = arr(hs0)                      # the T+1 states, each row written once
    pre = arr(np.zeros((T, H)))
    seed = np.zeros((T + 1, H))
    seed[T] = v0
    seed = wp.array(seed, dtype=wp.float64, device="cpu")

    def forward():
        pre.zero_()
        for t in range(T):
            wp.launch(rnn_pre, dim=(H, H + nin), inputs=[W, U, hs, xs, t], outputs=[pre],
                      device="cpu")
            wp.launch(rnn_act, dim=H, inputs=[pre, b, t], outputs=[hs], device="cpu")

    tape = wp.Tape()

    def grad():
        tape.reset()                   # drops the recorded launches, zeroes the gradients
        with tape:
            forward()
        tape.backward(grads={hs: seed})

    def result():
        grad()
        return np.concatenate([W.grad.numpy().ravel(), U.grad.numpy().ravel(),
                               xs.grad.numpy().ravel()])
    return forward, grad, result
