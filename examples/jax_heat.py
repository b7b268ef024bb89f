"""Fit the diffusivity of a rod from its final temperatures: a Numba heat-equation kernel inside a
JAX model, differentiated under `jax.jit(jax.grad(...))` and `jax.vmap` (docs/frameworks.md).

The kernel steps the explicit heat equation in place (its argument `u` leaves holding the final
temperatures; it returns nothing). `enzyme_py.jax.wrap` makes it a function of JAX arrays:
`u0, kappa -> u_final`. The model makes the diffusivity a line over the rod,
kappa(s) = a + b s, runs the kernel on three initial profiles at once (`vmap`), and fits (a, b)
by Adam to final temperatures made with the true (a, b). The gradient is enzyme_py's: the
augmented forward sweep keeps a tape, the reverse sweep runs from it.

    python examples/jax_heat.py [--steps 300]
"""
import argparse
import sys

import numpy as np
from numba import njit

import jax
import jax.numpy as jnp

import enzyme_py.jax

jax.config.update("jax_enable_x64", True)

N, STEPS = 32, 100
TRUE = np.array([0.15, 0.2])
START = np.array([0.3, 0.0])


@njit
def heat(u, kappa, steps):
    """`steps` explicit steps of u_t = (kappa u_x)_x, in place, the ends held fixed."""
    n = u.shape[0]
    tmp = np.empty_like(u)
    for _ in range(steps):
        for i in range(1, n - 1):
            tmp[i] = u[i] + kappa[i] * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = tmp[i]


s = np.linspace(0.0, 1.0, N)
U0 = np.stack([np.sin(np.pi * s), np.sin(2 * np.pi * s) ** 2, np.exp(-40 * (s - 0.3) ** 2)])
# u (argument 0) is an input and an output; kappa (1) an input; steps (2) a fixed value
rod = enzyme_py.jax.wrap(heat, (U0[0], np.full(N, 0.2), STEPS), inputs=(0, 1), outputs=(0,))


def final(params, u0):
    kappa = params[0] + params[1] * jnp.asarray(s)
    return jax.vmap(rod, in_axes=(0, None))(u0, kappa)


TARGET = np.asarray(final(jnp.asarray(TRUE), U0))


def loss(params):
    return jnp.mean((final(params, U0) - TARGET) ** 2)


def fit(steps=300, lr=0.01):
    """Adam on (a, b); returns the parameters and the loss history."""
    value_and_grad = jax.jit(jax.value_and_grad(loss))
    p = jnp.asarray(START)
    m, v = jnp.zeros(2), jnp.zeros(2)
    history = []
    for t in range(1, steps + 1):
        val, g = value_and_grad(p)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        p = p - lr * (m / (1 - 0.9 ** t)) / (jnp.sqrt(v / (1 - 0.999 ** t)) + 1e-12)
        history.append(float(val))
    return np.asarray(p), history


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    opts = ap.parse_args(argv)
    p, history = fit(opts.steps)
    for t in range(0, len(history), max(1, len(history) // 10)):
        print(f"{t:5d}  loss {history[t]:.3e}")
    print(f"fitted (a, b) = ({p[0]:.4f}, {p[1]:.4f}); true ({TRUE[0]}, {TRUE[1]}); "
          f"final loss {history[-1]:.2e}")
    return p, history


if __name__ == "__main__":
    main(sys.argv[1:])
