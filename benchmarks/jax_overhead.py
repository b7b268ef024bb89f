"""enzyme_py.jax's cost (docs/frameworks.md): a kernel called through `jax.jit` against the same
kernel called directly, and `jit(grad(...))` against enzyme_py's own gradient of the kernel.

    python -m benchmarks.jax_overhead [--rounds 7]

The plain call under jit runs through the kernel's XLA FFI handler; `ffi=False` (the callback) is
timed beside it, and the heat equation written in jax.numpy. Kernels: an elementwise kernel on 64
floats (the call's fixed cost: the kernel itself takes well under a microsecond), the heat equation
(200 points, 200 steps, in place) and N-body (16 bodies, 20 steps). Times are the best of
`--rounds` rounds of many calls each, in microseconds. The direct gradient is split mode
(`augmented_forward` + `reverse`), the calls the JAX gradient makes.

The ratios jit(grad) / autodiff and jit(f) - direct call are taken round by round, the two timed
one after the other in the same round (interleaved), and the median over the rounds is printed:
on a shared machine the load moves between rounds more than between neighbours.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import jax
import jax.numpy as jnp

from enzyme_py import Duplicated, augmented_forward, autodiff
from enzyme_py.jax import wrap

from tests.test_jax import elementwise, heat, nbody


def best(fn, rounds, calls):
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return min(times)


def interleaved(fns, rounds, calls):
    """Per round, the best of three batches of `calls` calls of each function, the functions one
    after the other: a list of per-round times (us) per function."""
    for fn in fns:
        fn()
    out = [[] for _ in fns]
    for _ in range(rounds):
        for fn, times in zip(fns, out):
            best_batch = []
            for _ in range(3):
                t0 = time.perf_counter()
                for _ in range(calls):
                    fn()
                best_batch.append((time.perf_counter() - t0) / calls * 1e6)
            times.append(min(best_batch))
    return out


def median(xs):
    return float(np.median(xs))


def direct_gradient(kernel, args, diff, outs):
    """augmented_forward + reverse with a seed of ones on the outputs (what grad(sum) asks)."""
    def run():
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        shadows = {p: np.zeros_like(copies[p]) for p in set(diff) | set(outs)}
        ann = [Duplicated(a, shadows[p]) if p in shadows else a for p, a in enumerate(copies)]
        _, tape = augmented_forward(kernel, *ann)
        for p in outs:
            shadows[p][...] = 1.0
        tape.reverse()
        return [shadows[p] for p in diff]
    return run


def heat_jnp(u, kappa, steps=200):
    """The heat kernel of tests/test_jax.py in jax.numpy (a scan over the steps)."""
    def step(u, _):
        return u.at[1:-1].set(u[1:-1] + kappa[1:-1] * (u[:-2] - 2.0 * u[1:-1] + u[2:])), None
    return jax.lax.scan(step, u, None, length=steps)[0]


def direct_autodiff(kernel, args, diff, outs):
    """enzyme_py.autodiff (reverse mode, one call) with the same seeds."""
    def run():
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        shadows = {p: (np.ones_like if p in outs else np.zeros_like)(copies[p]) for p in set(diff) | set(outs)}
        autodiff(kernel, *[Duplicated(a, shadows[p]) if p in shadows else a for p, a in enumerate(copies)])
        return [shadows[p] for p in diff]
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    opts = ap.parse_args()
    jax.config.update("jax_enable_x64", True)
    x, y = np.linspace(0.1, 1, 64), np.linspace(1, 2, 64)
    f = wrap(elementwise, (x, y, np.zeros(64)), inputs=(0, 1), outputs=(2,))
    jf = jax.jit(f)
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    out = np.zeros(64)
    t_direct = best(lambda: elementwise(x, y, out), opts.rounds, 2000)
    t_jit = best(lambda: jf(xj, yj).block_until_ready(), opts.rounds, 2000)
    ident = jax.jit(lambda a, b: a)
    d, j, i = interleaved([lambda: elementwise(x, y, out), lambda: jf(xj, yj).block_until_ready(),
                           lambda: ident(xj, yj).block_until_ready()], opts.rounds, 2000)
    print(f"elementwise n=64, interleaved rounds: jit(f) - direct call median "
          f"{median([b - a for a, b in zip(d, j)]):.1f} us; jit of the identity {median(i):.1f} us")
    cb = jax.jit(wrap(elementwise, (x, y, np.zeros(64)), inputs=(0, 1), outputs=(2,), ffi=False))
    t_cb = best(lambda: cb(xj, yj).block_until_ready(), opts.rounds, 2000)
    jnp_f = jax.jit(lambda a, b: jnp.sin(a) * b + a * a)
    t_jnp = best(lambda: jnp_f(xj, yj).block_until_ready(), opts.rounds, 2000)
    print(f"elementwise n=64: direct {t_direct:.2f} us, through jit {t_jit:.1f} us "
          f"(overhead {t_jit - t_direct:.1f} us), through jax.pure_callback {t_cb:.1f} us; "
          f"the same in jax.numpy under jit {t_jnp:.1f} us")

    rng = np.random.default_rng(0)
    u0, kappa = np.sin(np.linspace(0, np.pi, 200)), np.full(200, 0.2)
    pos, vel, mass = rng.standard_normal((16, 2)), 0.1 * rng.standard_normal((16, 2)), 1 + rng.random(16)
    for name, kernel, args, diff, outs, calls in (
            ("heat 200x200", heat, (u0, kappa, 200), (0, 1), (0,), 200),
            ("nbody 16x20", nbody, (pos, vel, mass, 0.01, 20), (0, 1, 2), (0, 1), 200)):
        g = wrap(kernel, args, inputs=diff, outputs=outs)
        ops = [jnp.asarray(args[p]) for p in g.kernel.operands]

        def loss(*a):
            r = g(*a)
            return sum(jnp.sum(o) for o in (r if isinstance(r, tuple) else (r,)))
        jgrad = jax.jit(jax.grad(loss, argnums=tuple(range(len(ops)))))
        jcall = jax.jit(g)
        plain = [a.copy() if isinstance(a, np.ndarray) else a for a in args]

        def direct_call():
            for p in outs:
                plain[p][...] = args[p]
            kernel(*plain)
        t_call = best(direct_call, opts.rounds, calls)
        t_jcall = best(lambda: jax.block_until_ready(jcall(*ops)), opts.rounds, calls)
        t_grad = best(direct_gradient(kernel, args, diff, outs), opts.rounds, calls)
        t_jgrad = best(lambda: jax.block_until_ready(jgrad(*ops)), opts.rounds, calls)
        t_ad = best(direct_autodiff(kernel, args, diff, outs), opts.rounds, calls)
        jg, ad, jc, dc = interleaved([lambda: jax.block_until_ready(jgrad(*ops)),
                                      direct_autodiff(kernel, args, diff, outs),
                                      lambda: jax.block_until_ready(jcall(*ops)), direct_call],
                                     opts.rounds, calls)
        print(f"{name}, interleaved rounds: jit(grad) / autodiff median "
              f"{median([a / b for a, b in zip(jg, ad)]):.2f} (rounds {min(a / b for a, b in zip(jg, ad)):.2f}"
              f" to {max(a / b for a, b in zip(jg, ad)):.2f}; jit(grad) {median(jg):.0f} us, autodiff "
              f"{median(ad):.0f} us); jit(f) - direct call median {median([a - b for a, b in zip(jc, dc)]):.1f} us")
        print(f"{name}: call direct {t_call:.1f} us, jit {t_jcall:.1f} us; gradient direct "
              f"(split mode) {t_grad:.1f} us, jit(grad) {t_jgrad:.1f} us "
              f"({t_jgrad / t_grad:.2f}x), autodiff {t_ad:.1f} us ({t_jgrad / t_ad:.2f}x); "
              f"jit(grad) / jit call {t_jgrad / t_jcall:.2f}")
    u, c = jnp.asarray(u0), jnp.asarray(kappa)
    native = jax.jit(heat_jnp)
    native_grad = jax.jit(jax.grad(lambda u, c: jnp.sum(heat_jnp(u, c)), argnums=(0, 1)))
    print(f"heat 200x200 in jax.numpy: jit {best(lambda: native(u, c).block_until_ready(), opts.rounds, 200):.1f}"
          f" us, jit(grad) {best(lambda: jax.block_until_ready(native_grad(u, c)), opts.rounds, 200):.1f} us")


if __name__ == "__main__":
    main()
