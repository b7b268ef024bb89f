"""Complex gradients against JAX's of the same computations (docs/semantics.md, "Complex
numbers"): for a real loss L, JAX's gradient is dL/dRe - i dL/dIm, the conjugate of enzyme_py's
shadow dL/dRe + i dL/dIm; for a complex return seeded by s, JAX's vjp with cotangent conj(s)
gives the conjugate of the derivative. The finite-difference checks of the same kernels are in
test_complex.py."""
import cmath

import numba
import numpy as np
import pytest

from enzyme_py import Active, Duplicated, autodiff

from test_complex import crank_nicolson, fir, wave_packet

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


@pytest.fixture(autouse=True, scope="module")
def x64():
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


def jax_crank_nicolson(psi, v, dt, dx, steps, weight):
    """The same Crank-Nicolson steps as test_complex.crank_nicolson (the Thomas loop written
    with lax.scan)."""
    psi, v = jnp.asarray(psi), jnp.asarray(v)
    n = psi.shape[0]
    r = 1j * dt / (4.0 * dx * dx)
    d = 1j * dt * v / 2.0
    diag = 1.0 + 2.0 * r + d

    def step(psi, _):
        left = jnp.concatenate([jnp.zeros(1, psi.dtype), psi[:-1]])
        right = jnp.concatenate([psi[1:], jnp.zeros(1, psi.dtype)])
        rhs = (1.0 - 2.0 * r - d) * psi + r * (left + right)

        def down(carry, i):
            cp, rh = carry
            m = diag[i] + r * cp
            cp_i, rh_i = -r / m, (rhs[i] + r * rh) / m
            return (cp_i, rh_i), (cp_i, rh_i)
        first = (-r / diag[0], rhs[0] / diag[0])
        _, (cps, rhs_) = jax.lax.scan(down, first, jnp.arange(1, n))
        cps = jnp.concatenate([first[0][None], cps])
        rhs_ = jnp.concatenate([first[1][None], rhs_])

        def up(nxt, i):
            p = rhs_[i] - cps[i] * nxt
            return p, p
        _, back = jax.lax.scan(up, rhs_[n - 1], jnp.arange(n - 2, -1, -1))
        return jnp.concatenate([back[::-1], rhs_[n - 1:]]), None

    psi, _ = jax.lax.scan(step, psi, None, length=steps)
    return jnp.sum(weight * (psi.real ** 2 + psi.imag ** 2))


def test_crank_nicolson_against_jax():
    psi, v = wave_packet(12)
    v = v + 0.3 * np.sin(np.arange(12.0))
    weight = np.linspace(0.0, 2.0, 12)
    args = (0.01, 10 / 11, 5, weight)
    dpsi, dv = np.zeros_like(psi), np.zeros_like(v)
    autodiff(crank_nicolson, Duplicated(psi.copy(), dpsi), Duplicated(v.copy(), dv), *args)
    jpsi, jv = jax.grad(jax_crank_nicolson, argnums=(0, 1))(jnp.asarray(psi), jnp.asarray(v), *args)
    assert np.abs(dpsi).max() > 1e-3 and np.abs(dv).max() > 1e-6    # not a trivial gradient
    np.testing.assert_allclose(dpsi, np.conj(np.asarray(jpsi)), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dv, np.asarray(jv), rtol=1e-9, atol=1e-12)
    assert not np.allclose(dpsi, np.asarray(jpsi), atol=1e-6)        # JAX's is the conjugate
    np.testing.assert_allclose(crank_nicolson(psi.copy(), v, *args),
                               jax_crank_nicolson(psi, v, *args), rtol=1e-12)
    # finite differences of the same kernel: test_complex.py's weighted-region test


def test_fir_filter_against_jax():
    rng = np.random.default_rng(5)
    x, h, s = (rng.normal(size=k) + 1j * rng.normal(size=k) for k in (16, 4, 16))
    dx, dh = np.zeros(16, complex), np.zeros(4, complex)
    autodiff(fir, Duplicated(x.copy(), dx), Duplicated(h.copy(), dh),
             Duplicated(np.zeros(16, complex), s.copy()))

    def loss(x, h):          # L = sum Re(conj(s) y), y the filter's output
        return jnp.sum(jnp.real(jnp.conj(s) * jnp.convolve(x, h)[:16]))
    jx, jh = jax.grad(loss, argnums=(0, 1))(jnp.asarray(x), jnp.asarray(h))
    np.testing.assert_allclose(dx, np.conj(np.asarray(jx)), rtol=1e-12)
    np.testing.assert_allclose(dh, np.conj(np.asarray(jh)), rtol=1e-12)


@numba.njit
def holomorphic(z, w):
    return cmath.exp(z * w) + z * z / w


def test_complex_active_and_return_against_jax_vjp():
    z, w, s = 0.3 + 0.4j, -0.7 + 0.2j, 0.6 - 1.1j
    dz, dw = autodiff(holomorphic, Active(z), Active(w), seed=s)

    def f(z, w):
        return jnp.exp(z * w) + z * z / w
    _, vjp = jax.vjp(f, jnp.asarray(z), jnp.asarray(w))
    jz, jw = vjp(jnp.asarray(np.conj(s)))          # JAX's cotangent is conj(s)
    np.testing.assert_allclose(dz, np.conj(complex(jz)), rtol=1e-13)
    np.testing.assert_allclose(dw, np.conj(complex(jw)), rtol=1e-13)
    # a real loss: jax.grad gives the conjugate
    jg = jax.grad(lambda z, w: jnp.real(jnp.conj(s) * f(z, w)))(jnp.asarray(z), jnp.asarray(w))
    np.testing.assert_allclose(dz, np.conj(complex(jg)), rtol=1e-13)
