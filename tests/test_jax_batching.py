"""enzyme_py.jax's batching rules: jacfwd, jacrev, hessian and vmap over cotangents run one
batched call (forward mode's k directions, batched reverse mode's k seeds), checked against the
one-at-a-time results and central differences; batched primals loop."""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import enzyme_py.jax as ej  # noqa: E402
from test_jax import CASES, X, Y, case, elementwise  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def x64():
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


def flat(name):
    """The case's kernel as a function of one flat vector to one flat vector."""
    f, args = case(name)
    shapes = [np.shape(a) for a in args]
    sizes = np.cumsum([0] + [int(np.prod(s)) for s in shapes])

    def g(x):
        outs = f(*[x[sizes[i]:sizes[i + 1]].reshape(s) for i, s in enumerate(shapes)])
        outs = outs if isinstance(outs, tuple) else (outs,)
        return jnp.concatenate([jnp.ravel(o) for o in outs])
    return g, np.concatenate([np.ravel(a) for a in args]), f.kernel


def central(fn, x, h=1e-6):
    """Central differences of fn at x, one column per entry of x."""
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((np.asarray(fn(x + e)) - np.asarray(fn(x - e))) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("name", list(CASES))
def test_jacobians_are_one_batched_call(name):
    g, x, k = flat(name)
    m = g(x).size
    k.calls.clear()
    jr = jax.block_until_ready(jax.jit(jax.jacrev(g))(x))
    assert k.calls["reverse"] == 1                # m seeds, one batched reverse-mode call
    k.calls.clear()
    jf = jax.block_until_ready(jax.jit(jax.jacfwd(g))(x))
    assert k.calls["tangent"] == 1                # n directions, one forward-mode call
    _, pull = jax.vjp(g, x)                       # one reverse sweep from the tape per row
    rows = np.stack([pull(e)[0] for e in np.eye(m)])
    np.testing.assert_allclose(jr, rows, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(jf, jr, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(jr, central(g, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["elementwise", "heat", "nbody"])
def test_hessian_is_one_call_per_kind(name):
    g, x, k = flat(name)

    def loss(x):
        return jnp.sum(jnp.sin(g(x)))
    k.calls.clear()
    hess = jax.block_until_ready(jax.jit(jax.hessian(loss))(x))
    assert (k.calls["rev2"], k.calls["reverse"]) == (1, 1)    # n directions, one cotangent
    grad = jax.jit(jax.grad(loss))
    np.testing.assert_allclose(hess, hess.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hess, central(grad, x), rtol=1e-5, atol=1e-7)


def test_vmap_over_cotangents_and_over_primals():
    g, x, k = flat("heat")
    out, pull = jax.vjp(g, x)
    cts = np.stack([np.cos(np.arange(out.size) * (j + 1)) for j in range(5)])
    k.calls.clear()
    got = jax.block_until_ready(jax.jit(jax.vmap(pull))(cts)[0])
    assert k.calls["reverse"] == 1
    np.testing.assert_allclose(got, np.stack([pull(c)[0] for c in cts]), rtol=1e-12, atol=1e-14)
    again = jax.block_until_ready(jax.jit(jax.vmap(pull))(cts[::-1] * 2.0)[0])  # the built entry
    np.testing.assert_allclose(again, got[::-1] * 2.0, rtol=1e-12, atol=1e-14)
    xs = np.stack([x * (1 + 0.1 * j) for j in range(3)])      # batched primals: a loop
    grad = jax.grad(lambda x: jnp.sum(g(x) ** 2))
    k.calls.clear()
    got = jax.block_until_ready(jax.jit(jax.vmap(grad))(xs))
    assert (k.calls["aug"], k.calls["reverse"]) == (3, 3)
    np.testing.assert_allclose(got, np.stack([grad(a) for a in xs]), rtol=1e-12, atol=1e-14)


def test_kernel_batched_reverse_refuses_loops_over_the_tape():
    f = ej.wrap(elementwise, (X, Y, np.zeros(X.size)), inputs=(0, 1), outputs=(2,))
    f.kernel.lanes = False                     # as after batched reverse mode refused it
    jr = jax.block_until_ready(jax.jit(jax.jacrev(f, argnums=(0, 1)))(X, Y))
    assert f.kernel.calls["reverse"] == X.size
    np.testing.assert_allclose(jr[0], np.diag(np.cos(X) * Y + 2 * X), atol=1e-14)
    np.testing.assert_allclose(jr[1], np.diag(np.sin(X)), atol=1e-14)
