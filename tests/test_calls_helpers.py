"""check_gradient and the helpers with real callers' arguments (issue 14): aliased arguments,
the kernel's precision, array and tuple returns in the objective; `argnums`, lists as inputs,
array-returning kernels in vjp / jvp / jacobian, `has_aux`. References are analytic or central
differences computed here.
"""
import math

import numpy as np
import pytest
from numba import njit

import enzyme_py as ez
from enzyme_py import Active, Duplicated, check_gradient
from enzyme_py.check import finite_difference

rng = np.random.default_rng(141)


def central(fun, x, h=1e-6):
    x = np.asarray(x, np.float64)
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        cols.append(np.ravel((np.asarray(fun(x + e)) - np.asarray(fun(x - e))) / (2 * h)))
    return np.stack(cols, axis=-1)


# ---- check_gradient: aliasing ---------------------------------------------------------------

@njit
def attract(head_emb, tail_emb, head, tail, lr):
    for i in range(head.shape[0]):
        j, k = head[i], tail[i]
        for d in range(head_emb.shape[1]):
            g = head_emb[j, d] - tail_emb[k, d]
            head_emb[j, d] -= lr * g * abs(g)
            tail_emb[k, d] += lr * g * abs(g)


def test_same_array_twice_with_one_shadow():
    emb = rng.standard_normal((5, 2))
    demb = np.zeros_like(emb)
    head, tail = np.array([0, 1, 2, 3]), np.array([1, 2, 3, 4])
    rep = check_gradient(attract, Duplicated(emb, demb), Duplicated(emb, demb), head, tail,
                         Active(0.1), rng=2)
    assert rep.passed, str(rep)
    np.testing.assert_array_equal(rep[0].ad, rep[1].ad)
    # the reference counts each location once: a copy with separate arrays differs
    separate = finite_difference(attract, Duplicated(emb, demb), Duplicated(emb.copy(), demb.copy()),
                                 head, tail, 0.1, rng=2)
    shared = finite_difference(attract, Duplicated(emb, demb), Duplicated(emb, demb), head, tail,
                               0.1, rng=2)
    assert not np.allclose(separate[0], shared[0])
    np.testing.assert_array_equal(shared[0], shared[1])


def test_overlapping_views():
    @njit
    def shift_mix(a, b):
        for i in range(a.shape[0]):
            b[i] = math.sin(a[i]) + 0.5 * b[i]
    buf = rng.standard_normal(9)
    dbuf = rng.standard_normal(9)
    rep = check_gradient(shift_mix, Duplicated(buf[:6], dbuf[:6]), Duplicated(buf[3:], dbuf[3:]))
    assert rep.passed, str(rep)
    assert np.shares_memory(rep[0].ad, rep[0].ad)   # reports are copies
    np.testing.assert_array_equal(rep[0].ad[3:], rep[1].ad[:3])


def test_float32_kernel_checks_active_scalars_at_float32_precision():
    @njit
    def scale32(a, x):
        s = np.float32(0.0)
        for i in range(x.shape[0]):
            s += np.float32(a) * x[i] * x[i]
        return s
    x = rng.standard_normal(50).astype(np.float32)
    rep = check_gradient(scale32, Active(0.7), Duplicated(x, np.zeros_like(x)))
    assert rep.passed, str(rep)
    assert rep[0].rtol == pytest.approx(1e-3)       # float32's, not 1e-6


def test_check_gradient_array_and_tuple_returns():
    @njit
    def returns_both(x, k=2.0):
        return np.sum(np.sin(x)) * k, x * x, 3
    x = rng.standard_normal(4)
    rep = check_gradient(returns_both, Duplicated(x, np.zeros(4)), rng=5)
    assert rep.passed, str(rep)
    assert isinstance(rep.seed, tuple) and rep.seed[2] is None
    rep = check_gradient(returns_both, Duplicated(x, np.zeros(4)), seed=(1.0, np.ones(4), None),
                         k=3.0)
    assert rep.passed, str(rep)
    np.testing.assert_allclose(rep[0].ad, 3.0 * np.cos(x) + 2 * x, rtol=1e-12)


def test_check_gradient_returned_argument():
    @njit
    def update(x, out):
        for i in range(x.shape[0]):
            out[i] = x[i] ** 3
        return out
    x = rng.standard_normal(5)
    rep = check_gradient(update, Duplicated(x, np.zeros(5)), Duplicated(np.zeros(5), np.ones(5)),
                         seed=np.full(5, 2.0))
    assert rep.passed, str(rep)
    np.testing.assert_allclose(rep[0].ad, 3.0 * 3 * x ** 2, rtol=1e-12)


# ---- helpers: argnums, lists, returns ---------------------------------------------------------

@njit
def loss3(w, b, X, y):
    s = 0.0
    for i in range(X.shape[0]):
        r = b
        for j in range(X.shape[1]):
            r += X[i, j] * w[j]
        s += (r - y[i]) ** 2
    return s


def test_argnums_in_value_and_grad_and_gradient():
    X, y = rng.standard_normal((6, 3)), rng.standard_normal(6)
    w, b = rng.standard_normal(3), 0.4
    v, (gw, gb) = ez.value_and_grad(loss3, argnums=(0, 1))(w, b, X, y)
    assert v == loss3(w, b, X, y)
    r = X @ w + b - y
    np.testing.assert_allclose(gw, 2 * X.T @ r, rtol=1e-13)
    assert gb == pytest.approx(2 * r.sum(), rel=1e-13)
    assert ez.gradient(loss3, w, b, X, y, argnums=1) == pytest.approx(gb, rel=1e-15)
    np.testing.assert_array_equal(ez.gradient(loss3, w, b, X, y), gw)
    np.testing.assert_array_equal(ez.gradient(loss3, w, b, X, y=y), gw)    # keywords pass
    with pytest.raises(TypeError, match="integer"):
        ez.gradient(loss3, w, 1, X, y, argnums=1)


def test_lists_as_inputs():
    g = ez.gradient(loss3, [0.1, 0.2, 0.3], 0.0, np.eye(3), np.zeros(3))
    np.testing.assert_allclose(g, 2 * np.array([0.1, 0.2, 0.3]), rtol=1e-15)
    with pytest.raises(TypeError, match="list"):
        ez.gradient(loss3, ["a", "b"], 0.0, np.eye(2), np.zeros(2))


def test_value_and_grad_wants_a_float_or_has_aux():
    @njit
    def with_aux(x):
        return np.sum(x ** 2), x.shape[0]
    x = np.arange(3.0)
    with pytest.raises(TypeError, match="has_aux"):
        ez.value_and_grad(with_aux)(x)
    (v, aux), g = ez.value_and_grad(with_aux, has_aux=True)(x)
    assert v == 5.0 and aux == 3
    np.testing.assert_array_equal(g, 2 * x)
    g2, aux2 = ez.gradient(with_aux, x, has_aux=True)
    np.testing.assert_array_equal(g2, g)


@njit
def sweep(x, a):
    y = np.empty(x.shape[0] + 1)
    y[0] = a
    for i in range(x.shape[0]):
        y[i + 1] = math.sin(x[i]) * y[i] + a * x[i]
    return y


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_jacobian_of_an_array_return(mode):
    x = rng.standard_normal(20)
    J = ez.jacobian(sweep, x, 0.7, mode=mode)
    assert J.shape == (21, 20)
    np.testing.assert_allclose(J, central(lambda z: sweep(z, 0.7), x), rtol=1e-7, atol=1e-9)
    Ja = ez.jacobian(sweep, x, 0.7, mode=mode, argnums=1)
    assert Ja.shape == (21,)
    np.testing.assert_allclose(Ja, central(lambda a: sweep(x, float(a[0])), [0.7])[:, 0],
                               rtol=1e-7, atol=1e-9)
    Jx, Ja2 = ez.jacobian(sweep, x, 0.7, mode=mode, argnums=(0, 1))
    np.testing.assert_array_equal(Jx, J)
    np.testing.assert_allclose(Ja2, Ja, rtol=1e-15)


def test_vjp_and_jvp_of_an_array_return():
    x, w, v = rng.standard_normal(7), rng.standard_normal(8), rng.standard_normal(7)
    J = central(lambda z: sweep(z, 0.3), x)
    y, pullback = ez.vjp(sweep, x, 0.3)
    np.testing.assert_array_equal(y, sweep(x, 0.3))
    np.testing.assert_allclose(pullback(w), J.T @ w, rtol=1e-7, atol=1e-9)
    gx, ga = ez.vjp(sweep, x, 0.3, argnums=(0, 1))[1](w)
    np.testing.assert_allclose(gx, J.T @ w, rtol=1e-7, atol=1e-9)
    y2, t = ez.jvp(sweep, x, v, 0.3)
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_allclose(t, J @ v, rtol=1e-7, atol=1e-9)


def test_differentiable_with_argnums():
    @ez.differentiable(argnums=(0, 1))
    @njit
    def model(w, b, X):
        s = 0.0
        for i in range(X.shape[0]):
            z = b
            for j in range(X.shape[1]):
                z += X[i, j] * w[j]
            s += np.tanh(z)
        return s
    X, w = rng.standard_normal((4, 3)), rng.standard_normal(3)
    gw, gb = model.grad(w, 0.2, X)
    s = 1 - np.tanh(X @ w + 0.2) ** 2
    np.testing.assert_allclose(gw, X.T @ s, rtol=1e-12)
    assert gb == pytest.approx(s.sum(), rel=1e-12)
    assert model(w, 0.2, X) == pytest.approx(np.sum(np.tanh(X @ w + 0.2)), rel=1e-15)


def test_hessian_vector_product_with_defaults_and_keywords():
    @njit
    def quartic(x, k=2.0, shift=0.0):
        return k * np.sum((x - shift) ** 4)
    x, v = rng.standard_normal(5), rng.standard_normal(5)
    np.testing.assert_allclose(ez.hessian_vector_product(quartic, x, v), 24.0 * x ** 2 * v,
                               rtol=1e-12)
    np.testing.assert_allclose(ez.hessian_vector_product(quartic, x, v, shift=0.5),
                               24.0 * (x - 0.5) ** 2 * v, rtol=1e-12)
    H = ez.hessian(quartic, x, 3.0)
    np.testing.assert_allclose(H, np.diag(36.0 * x ** 2), rtol=1e-12, atol=1e-14)


def test_const_alias_of_a_duplicated_array_is_named():
    emb = rng.standard_normal((3, 2))
    with pytest.raises(ValueError, match="`head_emb` .Const. shares memory with `tail_emb`"):
        check_gradient(attract, emb, Duplicated(emb, np.zeros_like(emb)), np.array([0]),
                       np.array([1]), 0.1)
