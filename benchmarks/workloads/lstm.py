"""Workload 5: ADBench LSTM objective, l = 2 layers, c = 1024 characters, b = 14.

The state (h_L, c_L rows) is updated in place; it is Duplicated (its values depend on the
parameters) but its derivative is not reported. Gradient order (ADBench): main params
(2l x 4b, row-major), then extra params (3 x b): 266 values for l = 2.
"""
import math
import os

import numpy as np
from numba import njit

from ..harness import Arg, Instance
from . import DATA_DIR

NAME = "lstm"
TITLE = "ADBench LSTM l=2 c=1024"


def read_lstm(path):
    """Read an ADBench LSTM file: returns (main_params (2l, 4b), extra_params (3, b),
    state (2l, b), sequence (c, b))."""
    with open(path) as f:
        tok = f.read().split()
    l, c, b = int(tok[0]), int(tok[1]), int(tok[2])
    pos = 3

    def take(rows, cols):
        nonlocal pos
        out = np.array(tok[pos:pos + rows * cols], dtype=np.float64).reshape(rows, cols)
        pos += rows * cols
        return out
    main = take(2 * l, 4 * b)
    extra = take(3, b)
    state = take(2 * l, b)
    seq = take(c, b)
    return main, extra, state, seq


@njit
def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


@njit
def lstm_objective(main_params, extra_params, state, sequence):
    nlayers = main_params.shape[0] // 2
    b = state.shape[1]
    c = sequence.shape[0]
    total = 0.0
    count = 0
    for t in range(c - 1):
        for layer in range(nlayers):
            w = main_params[2 * layer]
            bias = main_params[2 * layer + 1]
            hidden = state[2 * layer]
            cell = state[2 * layer + 1]
            for j in range(b):
                if layer == 0:
                    xj = sequence[t, j] * extra_params[0, j]
                else:
                    xj = state[2 * layer - 2, j]
                forget = sigmoid(xj * w[j] + bias[j])
                ingate = sigmoid(hidden[j] * w[b + j] + bias[b + j])
                outgate = sigmoid(xj * w[2 * b + j] + bias[2 * b + j])
                change = math.tanh(hidden[j] * w[3 * b + j] + bias[3 * b + j])
                cell[j] = cell[j] * forget + ingate * change
                hidden[j] = outgate * math.tanh(cell[j])
        top = state[2 * nlayers - 2]
        lse = 0.0
        for j in range(b):
            lse += math.exp(top[j] * extra_params[1, j] + extra_params[2, j])
        lse = math.log(lse + 2.0)
        for j in range(b):
            ypred = top[j] * extra_params[1, j] + extra_params[2, j]
            total += sequence[t + 1, j] * (ypred - lse)
        count += b
    return -total / count


kernel = lstm_objective


def instance_from(data, note=""):
    main, extra, state, seq = data
    args = [Arg("dup", main, name="main_params"), Arg("dup", extra, name="extra_params"),
            Arg("dup", state, wrt=False, name="state"), Arg("const", seq, name="sequence")]
    return Instance(lstm_objective, args, note=note)


def setup(quick=False):
    data = read_lstm(os.path.join(DATA_DIR, "lstm", "lstm_l2_c1024.txt"))
    if quick:
        main, extra, state, seq = data
        data = (main, extra, state, seq[:64].copy())
    return instance_from(data, note="l=2 c=1024" if not quick else "l=2 c=64")


def jax_setup(inst):
    import jax
    import jax.numpy as jnp
    main, extra, state, seq = (jnp.asarray(a.init) for a in inst.spec)
    nl = main.shape[0] // 2
    b = state.shape[1]

    def f(main, extra):
        def step(st, t):
            x = seq[t] * extra[0]
            new = []
            for L in range(nl):
                w, bi = main[2 * L], main[2 * L + 1]
                h, cc = st[2 * L], st[2 * L + 1]
                fg = jax.nn.sigmoid(x * w[:b] + bi[:b])
                ig = jax.nn.sigmoid(h * w[b:2 * b] + bi[b:2 * b])
                og = jax.nn.sigmoid(x * w[2 * b:3 * b] + bi[2 * b:3 * b])
                ch = jnp.tanh(h * w[3 * b:] + bi[3 * b:])
                cc = cc * fg + ig * ch
                h = og * jnp.tanh(cc)
                new += [h, cc]
                x = h
            y = x * extra[1] + extra[2]
            yhat = y - jnp.log(jnp.sum(jnp.exp(y)) + 2.0)
            return jnp.stack(new), jnp.dot(seq[t + 1], yhat)
        _, tot = jax.lax.scan(step, state, jnp.arange(seq.shape[0] - 1))
        return -jnp.sum(tot) / ((seq.shape[0] - 1) * b)
    fwd = jax.jit(f)
    g = jax.jit(jax.grad(f, argnums=(0, 1)))

    def result():
        return np.concatenate([np.asarray(r).ravel() for r in g(main, extra)])
    return (lambda: fwd(main, extra).block_until_ready()), \
        (lambda: jax.block_until_ready(g(main, extra))), result


def torch_setup(inst):
    import torch
    main0, extra0, state, seq = (torch.from_numpy(np.array(a.init, copy=True))
                                 for a in inst.spec)
    nl = main0.shape[0] // 2
    b = state.shape[1]
    c = seq.shape[0]

    def f(main, extra):
        st = [state[k] for k in range(2 * nl)]
        total = 0.0
        for t in range(c - 1):
            x = seq[t] * extra[0]
            for L in range(nl):
                w, bi = main[2 * L], main[2 * L + 1]
                h, cc = st[2 * L], st[2 * L + 1]
                fg = torch.sigmoid(x * w[:b] + bi[:b])
                ig = torch.sigmoid(h * w[b:2 * b] + bi[b:2 * b])
                og = torch.sigmoid(x * w[2 * b:3 * b] + bi[2 * b:3 * b])
                ch = torch.tanh(h * w[3 * b:] + bi[3 * b:])
                cc = cc * fg + ig * ch
                h = og * torch.tanh(cc)
                st[2 * L], st[2 * L + 1] = h, cc
                x = h
            y = x * extra[1] + extra[2]
            total = total + torch.dot(seq[t + 1], y - torch.log(torch.sum(torch.exp(y)) + 2.0))
        return -total / ((c - 1) * b)

    def fwd():
        with torch.no_grad():
            return f(main0, extra0)

    def grad():
        args = [a.detach().requires_grad_(True) for a in (main0, extra0)]
        return torch.autograd.grad(f(*args), args)

    def result():
        return np.concatenate([g.numpy().ravel() for g in grad()])
    return fwd, grad, result
