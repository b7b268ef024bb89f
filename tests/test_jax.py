"""enzyme_py.jax: Numba kernels as JAX functions under jit, grad, vjp, jvp, jacfwd, jacrev and vmap,
checked by jax.test_util.check_grads (finite differences) and against analytic derivatives."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
from numba import njit

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

import enzyme_py.jax as ej  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def x64():
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


@njit
def elementwise(x, y, out):
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * y[i] + x[i] * x[i]


@njit
def rnn(W, U, xs, h0, hs):
    h = np.tanh(W @ h0 + U @ xs[0])
    hs[0, :] = h
    for t in range(1, xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
        hs[t, :] = h


@njit
def heat(u, kappa, steps):
    """In place: u holds the final temperatures; returns nothing."""
    n = u.shape[0]
    tmp = np.empty_like(u)
    for _ in range(steps):
        for i in range(1, n - 1):
            tmp[i] = u[i] + kappa[i] * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = tmp[i]


@njit
def nbody(pos, vel, mass, dt, steps):
    n = pos.shape[0]
    for _ in range(steps):
        for i in range(n):
            for j in range(n):
                if i != j:
                    dx = pos[j, 0] - pos[i, 0]
                    dy = pos[j, 1] - pos[i, 1]
                    r2 = dx * dx + dy * dy + 0.1
                    s = dt * mass[j] / (r2 * np.sqrt(r2))
                    vel[i, 0] += s * dx
                    vel[i, 1] += s * dy
        for i in range(n):
            pos[i, 0] += dt * vel[i, 0]
            pos[i, 1] += dt * vel[i, 1]


@njit
def energy(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += w[i] * x[i] ** 3
    return s


rng = np.random.default_rng(0)
N, H, T = 5, 3, 4
X, Y = np.linspace(0.1, 1.0, N), np.linspace(1.0, 2.0, N)
W, U = 0.5 * rng.standard_normal((H, H)), 0.5 * rng.standard_normal((H, 2))
XS, H0 = rng.standard_normal((T, 2)), 0.1 * rng.standard_normal(H)
U0, KAPPA = np.sin(np.linspace(0, np.pi, 8)), np.full(8, 0.2)
POS, VEL, MASS = rng.standard_normal((4, 2)), 0.1 * rng.standard_normal((4, 2)), 1.0 + rng.random(4)

CASES = {
    "elementwise": (lambda: ej.wrap(elementwise, (X, Y, np.zeros(N)), inputs=(0, 1), outputs=(2,)),
                    (X, Y)),
    "rnn": (lambda: ej.wrap(rnn, (W, U, XS, H0, np.zeros((T, H))), inputs=(0, 1, 2, 3), outputs=(4,)),
            (W, U, XS, H0)),
    "heat": (lambda: ej.wrap(heat, (U0, KAPPA, 20), inputs=(0, 1), outputs=(0,)), (U0, KAPPA)),
    "nbody": (lambda: ej.wrap(nbody, (POS, VEL, MASS, 0.05, 3), inputs=(0, 1, 2), outputs=(0, 1)),
              (POS, VEL, MASS)),
}
_made = {}


def case(name):
    if name not in _made:
        make, args = CASES[name]
        _made[name] = make(), args
    return _made[name]


def batch(args, k=3):
    """k copies of each argument, each perturbed differently."""
    return tuple(np.stack([a * (1.0 + 0.1 * j) for j in range(k)]) for a in args)


@pytest.mark.parametrize("name", list(CASES))
def test_check_grads_jit(name):
    f, args = case(name)
    check_grads(jax.jit(f), args, order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", list(CASES))
def test_check_grads_vmap(name):
    f, args = case(name)
    check_grads(jax.jit(jax.vmap(f)), batch(args), order=1, modes=("fwd", "rev"))


def test_values_match_a_plain_call():
    f, args = case("nbody")
    pos, vel = POS.copy(), VEL.copy()
    nbody(pos, vel, MASS, 0.05, 3)
    got = jax.jit(f)(*args)
    np.testing.assert_array_equal(got[0], pos)
    np.testing.assert_array_equal(got[1], vel)
    np.testing.assert_array_equal(POS, args[0])      # the caller's arrays are not written


def test_elementwise_analytic():
    f, _ = case("elementwise")
    g = jax.jit(jax.grad(lambda x, y: f(x, y).sum(), argnums=(0, 1)))(X, Y)
    np.testing.assert_allclose(g[0], np.cos(X) * Y + 2 * X, rtol=1e-12)
    np.testing.assert_allclose(g[1], np.sin(X), rtol=1e-12)
    jf = jax.jacfwd(f, argnums=0)(X, Y)      # k directions in one forward call
    jr = jax.jacrev(f, argnums=0)(X, Y)      # k seeds in one batched reverse-mode call
    np.testing.assert_allclose(jf, np.diag(np.cos(X) * Y + 2 * X), atol=1e-14)
    np.testing.assert_allclose(jr, jf, atol=1e-14)


def test_vmap_inside_grad_and_partly_batched():
    f, _ = case("elementwise")
    xs = batch((X,))[0]
    loss = jax.jit(jax.grad(lambda xs, y: jax.vmap(f, in_axes=(0, None))(xs, y).sum(), argnums=(0, 1)))
    gx, gy = loss(xs, Y)
    np.testing.assert_allclose(gx, np.cos(xs) * Y + 2 * xs, rtol=1e-12)
    np.testing.assert_allclose(gy, np.sin(xs).sum(0), rtol=1e-12)   # y unbatched: summed


def test_nested_vmap():
    f, _ = case("elementwise")
    xs = np.stack([batch((X,), 2)[0]] * 3)        # (3, 2, N)
    out = jax.jit(jax.vmap(jax.vmap(f, in_axes=(0, None)), in_axes=(0, None)))(xs, Y)
    np.testing.assert_allclose(out, np.sin(xs) * Y + xs * xs, rtol=1e-14)


def test_float_return():
    f = ej.wrap(energy, (X, Y), inputs=(0,))
    np.testing.assert_allclose(jax.jit(f)(X, Y), np.sum(Y * X ** 3), rtol=1e-14)
    np.testing.assert_allclose(jax.grad(f)(X, Y), 3 * Y * X ** 2, rtol=1e-14)
    check_grads(lambda x: f(x, Y), (X,), order=1, modes=("fwd", "rev"))


def test_reverse_runs_from_the_tape():
    f, args = case("heat")
    k = f.kernel
    loss = jax.jit(jax.grad(lambda u, c: jnp.sum(f(u, c) ** 2), argnums=(0, 1)))
    hlo = loss.lower(*args).as_text()
    names = sorted(line.split("custom_call @")[1].split("(")[0].rsplit("_", 1)[0]
                   for line in hlo.splitlines() if "custom_call @" in line)
    assert names == ["enzyme_py_heat_aug", "enzyme_py_heat_reverse"]   # no plain call, no tangent
    loss(*args)
    k.calls.clear()
    before = int(k.ring.next[0])
    loss(*args)
    assert not k.calls and int(k.ring.next[0]) == before + 1    # compiled: no Python, one forward sweep
    _, vjp = jax.vjp(f, *args)
    k.calls.clear()
    a, b = vjp(jnp.ones(8)), vjp(2 * jnp.ones(8))
    assert dict(k.calls) == {"reverse": 2}
    np.testing.assert_allclose(b[0], 2 * a[0], rtol=1e-14)


def test_reverse_reads_unwritten_operands_from_the_arrays():
    """The operands are immutable XLA buffers: the split gradient reads kappa, which the kernel
    never writes, from the array the reverse sweep gets instead of taping it per iteration."""
    from enzyme_py import Duplicated, augmented_forward
    from enzyme_py.modes.split import Tape
    f, args = case("heat")
    k = f.kernel
    split = k.split_entries()
    kargs, shadows = k.arguments(args), [np.zeros(8), np.zeros(8)]
    _, frame = split.forward(*kargs, *shadows)
    kept = Tape(split, frame, kargs, shadows, (3, split.spec.active_positions), "heat")
    _, public = augmented_forward(heat, Duplicated(U0.copy(), np.zeros(8)),
                                  Duplicated(KAPPA.copy(), np.zeros(8)), 20)
    assert kept.nbytes < 0.6 * public.nbytes      # kappa[i] per iteration no longer taped
    g = jax.jit(jax.grad(lambda u, c: jnp.sum(jnp.sin(f(u, c))), argnums=(0, 1)))(*args)
    u = U0.copy()
    du, dc = np.cos(_heat_final(U0, KAPPA)), np.zeros(8)
    from enzyme_py import autodiff
    autodiff(heat, Duplicated(u, du), Duplicated(KAPPA.copy(), dc), 20)
    np.testing.assert_allclose(g[0], du, rtol=1e-12)
    np.testing.assert_allclose(g[1], dc, rtol=1e-12)


def _heat_final(u, c):
    u = u.copy()
    heat(u, c, 20)
    return u


@njit
def scratch_input(x, c, out):
    """Writes its input x (a scratch array, not an output): x is not read back from the array."""
    for i in range(x.shape[0]):
        x[i] = c[i] * x[i]
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i] * c[i]


def test_written_input_is_taped():
    f = ej.wrap(scratch_input, (X, Y, np.zeros(N)), inputs=(0, 1), outputs=(2,))
    gx, gc = jax.jit(jax.grad(lambda x, c: f(x, c).sum(), argnums=(0, 1)))(X, Y)
    np.testing.assert_allclose(gx, 2 * Y ** 3 * X, rtol=1e-12)       # out = c^3 x^2
    np.testing.assert_allclose(gc, 3 * Y ** 2 * X ** 2, rtol=1e-12)
    check_grads(jax.jit(f), (X, Y), order=1, modes=("rev",))


SMALL = {     # second order: small sizes (each second derivative runs the kernel again)
    "elementwise": lambda: case("elementwise"),
    "heat": lambda: (ej.wrap(heat, (U0[:5], KAPPA[:5], 3), inputs=(0, 1), outputs=(0,)), (U0[:5], KAPPA[:5])),
    "nbody": lambda: (ej.wrap(nbody, (POS[:3], VEL[:3], MASS[:3], 0.05, 2), inputs=(0, 1, 2), outputs=(0, 1)),
                      (POS[:3], VEL[:3], MASS[:3])),
    "rnn": lambda: (ej.wrap(rnn, (W[:3, :3], U[:3], XS[:3], H0[:3], np.zeros((3, 3))), inputs=(0, 1, 2, 3),
                            outputs=(4,)), (W[:3, :3], U[:3], XS[:3], H0[:3])),
}


@pytest.mark.parametrize("name", list(SMALL))
def test_check_grads_order_2(name):
    f, args = SMALL[name]()
    check_grads(jax.jit(f), args, order=2, modes=("fwd", "rev"))


def test_check_grads_order_2_vmap():
    f, args = SMALL["heat"]()
    check_grads(jax.jit(jax.vmap(f)), batch(args, 2), order=2, modes=("fwd", "rev"))


def test_hessian_elementwise_analytic():
    f, _ = case("elementwise")
    H = jax.jit(jax.hessian(lambda x, y: f(x, y).sum(), argnums=(0, 1)))(X, Y)
    np.testing.assert_allclose(H[0][0], np.diag(-np.sin(X) * Y + 2), atol=1e-13)
    np.testing.assert_allclose(H[0][1], np.diag(np.cos(X)), atol=1e-13)
    np.testing.assert_allclose(H[1][1], np.zeros((N, N)), atol=1e-13)


def test_jvp_of_grad_matches_differences_of_the_gradient():
    f, (u, c) = SMALL["heat"]()
    grad = jax.jit(jax.grad(lambda u, c: jnp.sum(jnp.sin(f(u, c))), argnums=(0, 1)))
    du, dc = np.linspace(-1, 1, 5), np.linspace(0.5, 1.5, 5)
    _, hv = jax.jvp(grad, (u, c), (du, dc))
    h = 1e-6
    plus, minus = grad(u + h * du, c + h * dc), grad(u - h * du, c - h * dc)
    for got, p, m in zip(hv, plus, minus):
        np.testing.assert_allclose(got, (p - m) / (2 * h), rtol=1e-6, atol=1e-9)


def test_third_order_raises():
    f, _ = case("elementwise")
    with pytest.raises(ej.SecondOrderError, match="first and second derivatives"):
        jax.jacfwd(jax.hessian(lambda x: f(x, Y).sum()))(X)


def test_bad_input():
    f, _ = case("elementwise")
    with pytest.raises(TypeError, match=r"operand 0 of call is float64\[4\], the example arguments make it"):
        f(X[:4], Y)
    with pytest.raises(TypeError, match="takes 2 arrays"):
        f(X)
    g = ej.wrap(elementwise, (X, Y, np.zeros(N)), inputs=(0,), outputs=(2,))
    with pytest.raises(TypeError, match="argument 1 is not among the inputs"):
        jax.jvp(g, (X, Y), (X, Y))
    with pytest.raises(TypeError, match="float array"):
        ej.wrap(elementwise, (X, Y, np.zeros(N, np.int64)), inputs=(0,), outputs=(2,))
    with pytest.raises(TypeError, match="inputs and outputs are arrays, not int"):
        ej.wrap(heat, (U0, KAPPA, 20), inputs=(0, 2), outputs=(0,))


def test_released_tape():
    f = ej.wrap(elementwise, (X, Y, np.zeros(N)), inputs=(0, 1), outputs=(2,), max_tapes=1)
    _, vjp = jax.vjp(f, X, Y)
    jax.vjp(f, X, Y)          # the newest call's tape only is kept
    with pytest.raises(RuntimeError, match="was released"):
        vjp(jnp.ones(N))
    with pytest.raises(Exception, match="was released"):     # from the compiled handler, under jit
        jax.jit(vjp)(jnp.ones(N))
    _, vjp = jax.vjp(f, X, Y)
    np.testing.assert_allclose(jax.jit(vjp)(jnp.ones(N))[0], np.cos(X) * Y + 2 * X, rtol=1e-12)
    old = ej.tapes.max_calls
    try:
        ej.tapes.max_calls = 1
        xs = batch((X,))[0]          # a batched forward call's tapes are released together
        g = jax.jit(jax.vmap(jax.grad(lambda x: f(x, Y).sum())))(xs)
        np.testing.assert_allclose(g, np.cos(xs) * Y + 2 * xs, rtol=1e-12)
    finally:
        ej.tapes.max_calls = old


def test_example_jax_heat_fits_the_diffusivity():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "jax_heat.py")
    spec = importlib.util.spec_from_file_location("example_jax_heat", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    p, history = mod.fit(steps=150)
    np.testing.assert_allclose(p, mod.TRUE, atol=1e-4)
    assert history[-1] < 1e-6 * history[0]


@pytest.mark.parametrize("name", ["heat", "nbody"])
def test_ffi_call_matches_the_callback(name):
    f, args = case(name)
    f.kernel.calls.clear()
    got = jax.jit(f)(*args)
    assert f.kernel.targets and f.kernel.calls["call"] == 0   # no Python on the call
    k = f.kernel
    slow = ej.wrap(k.dispatcher, k.examples, inputs=k.diff, outputs=k.outs, ffi=False)
    want = jax.jit(slow)(*args)
    assert slow.kernel.calls["call"] == 1
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_array_equal(a, b)


def test_float32_kernel():
    x = X.astype(np.float32)
    f = ej.wrap(elementwise, (x, x, np.zeros(N, np.float32)), inputs=(0,), outputs=(2,))
    out = jax.jit(f)(x, x)
    assert out.dtype == np.float32
    g = jax.jit(jax.vmap(jax.grad(lambda a, b: f(a, b).sum())))(np.stack([x, 2 * x]), np.stack([x, x]))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g[1], np.cos(2 * x) * x + 4 * x, rtol=1e-6)


@njit
def refuses_negative(x, out):
    if x[0] < 0:
        raise ValueError("a negative first entry")
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i]


def test_kernel_exception_under_jit():
    """The FFI handler returns an XLA error (once the exception was swallowed: zeros came back)."""
    x = np.ones(3)
    f = ej.wrap(refuses_negative, (x, np.zeros(3)), inputs=0, outputs=1)
    np.testing.assert_array_equal(jax.jit(f)(x), 2 * x)
    with pytest.raises(Exception, match="refuses_negative raised an exception in its XLA FFI call"):
        jax.jit(f)(-x)
    g = ej.wrap(refuses_negative, (x, np.zeros(3)), inputs=0, outputs=1, ffi=False)
    with pytest.raises(Exception, match="a negative first entry"):
        jax.jit(g)(-x)
    with pytest.raises(Exception, match=r"refuses_negative raised an exception in its XLA FFI call \(aug\)"):
        jax.jit(jax.grad(lambda a: f(a).sum()))(-x)      # the forward sweep's compiled handler
    with pytest.raises(Exception, match="a negative first entry"):
        jax.jit(jax.grad(lambda a: g(a).sum()))(-x)


def test_import_enzyme_py_does_not_import_jax():
    code = "import sys, enzyme_py; assert 'jax' not in sys.modules and 'enzyme_py.jax' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True,
                   cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
