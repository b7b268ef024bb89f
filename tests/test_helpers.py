"""The helpers (enzyme_py/helpers.py) against finite differences, which only the tests compute:
jacobian on a 20x30 kernel (forward and reverse), Hessian-vector products by forward over reverse
on Rosenbrock and on the ADBench GMM objective, gradient / value_and_grad / jvp / vjp, the
`@differentiable` decorator, and an @njit gradient-descent loop calling the gradient entry.
"""
import math
import os

import numpy as np
import pytest
from numba import njit

import enzyme_py as ez
from enzyme_py import Duplicated


# ---------------------------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------------------------

@njit
def layer(x, y, W, b):
    """y = tanh(W sin(x) + b) * x[:m]: a 20x30 Jacobian with every entry non-zero."""
    m, n = W.shape
    for i in range(m):
        s = b[i]
        for j in range(n):
            s += W[i, j] * math.sin(x[j])
        y[i] = math.tanh(s) * x[i]


@njit
def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        s += 100.0 * a * a + b * b
    return s


@njit
def rosenbrock_grad(x):
    g = np.zeros_like(x)
    for i in range(x.shape[0] - 1):
        a = x[i + 1] - x[i] * x[i]
        g[i] += -400.0 * x[i] * a - 2.0 * (1.0 - x[i])
        g[i + 1] += 200.0 * a
    return g


def central(fun, x, h=1e-6):
    """Central differences of fun (array -> array) at x, column by column (test reference)."""
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        cols.append(((fun(x + e) - fun(x - e)) / (2 * h)).ravel())
    return np.stack(cols, axis=-1)


def close(a, b, rtol):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(1.0, float(np.max(np.abs(b))))
    assert np.max(np.abs(a - b)) <= rtol * scale, f"max err {np.max(np.abs(a - b)):.3e} (scale {scale:.3g})"


@pytest.fixture(scope="module")
def layer_problem():
    r = np.random.default_rng(7)
    W, b = r.uniform(-0.3, 0.3, (20, 30)), r.uniform(-0.5, 0.5, 20)
    x = r.uniform(-1, 1, 30)
    return x, W, b


# ---------------------------------------------------------------------------------------------
# jacobian
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_jacobian_20x30_matches_finite_differences(layer_problem, mode):
    x, W, b = layer_problem
    y = np.zeros(20)
    J = ez.jacobian(layer, x, W, b, out=y, mode=mode)
    assert J.shape == (20, 30)

    def plain(xx):
        yy = np.zeros(20)
        layer(xx, yy, W, b)
        return yy
    close(J, central(plain, x), 1e-7)


def test_jacobian_modes_agree(layer_problem):
    x, W, b = layer_problem
    y = np.zeros(20)
    Jf = ez.jacobian(layer, x, W, b, out=y, mode="forward")
    Jr = ez.jacobian(layer, x, W, b, out=y, mode="reverse")
    close(Jf, Jr, 1e-13)


def test_jacobian_mode_is_checked(layer_problem):
    x, W, b = layer_problem
    with pytest.raises(ValueError, match="mode"):
        ez.jacobian(layer, x, W, b, out=np.zeros(20), mode="sideways")


# ---------------------------------------------------------------------------------------------
# jvp / vjp / gradient / value_and_grad / decorator
# ---------------------------------------------------------------------------------------------

def test_gradient_and_value_and_grad():
    x = np.linspace(-1.0, 1.5, 9)
    g = ez.gradient(rosenbrock, x)
    np.testing.assert_allclose(g, rosenbrock_grad(x), rtol=1e-13, atol=1e-12)
    v, g2 = ez.value_and_grad(rosenbrock)(x)
    assert v == rosenbrock(x)
    np.testing.assert_array_equal(g, g2)


def test_gradient_of_a_scalar_argument():
    @njit
    def f(a, c):
        return math.sin(a) * c

    assert ez.gradient(f, 0.3, 2.0) == pytest.approx(2.0 * math.cos(0.3), rel=1e-15)


def test_jvp_and_vjp(layer_problem):
    x, W, b = layer_problem
    r = np.random.default_rng(3)
    u, w = r.uniform(-1, 1, 30), r.uniform(-1, 1, 20)
    J = ez.jacobian(layer, x, W, b, out=np.zeros(20))
    y, dy = ez.jvp(layer, x, u, W, b, out=np.zeros(20))
    close(dy, J @ u, 1e-13)
    y2, pullback = ez.vjp(layer, x, W, b, out=np.zeros(20))
    np.testing.assert_array_equal(y, y2)
    close(pullback(w), J.T @ w, 1e-13)
    # scalar kernels
    xs = np.linspace(-1.0, 1.5, 9)
    v, t = ez.jvp(rosenbrock, xs, u[:9])
    assert v == rosenbrock(xs)
    assert t == pytest.approx(rosenbrock_grad(xs) @ u[:9], rel=1e-12)
    v, pb = ez.vjp(rosenbrock, xs)
    close(pb(2.0), 2.0 * rosenbrock_grad(xs), 1e-13)


def test_differentiable_decorator():
    @ez.differentiable
    @njit
    def energy(x, k):
        e = 0.0
        for i in range(x.shape[0] - 1):
            d = x[i + 1] - x[i]
            e += 0.5 * k * d * d
        return e

    x = np.array([0.0, 0.3, 1.0, 0.5])
    assert energy(x, 2.0) == pytest.approx(0.5 * 2.0 * (0.09 + 0.49 + 0.25))
    g = energy.grad(x, 2.0)
    np.testing.assert_allclose(g, 2.0 * np.array([-0.3, 0.3 - 0.7, 0.7 + 0.5, -0.5]), rtol=1e-14)
    v, g2 = energy.value_and_grad(x, 2.0)
    np.testing.assert_array_equal(g, g2)
    _, t = energy.jvp(x, np.ones(4), 2.0)
    assert t == pytest.approx(g.sum(), abs=1e-14)
    hv = energy.hvp(x, np.array([1.0, 0.0, 0.0, 0.0]), 2.0)
    np.testing.assert_allclose(hv, [2.0, -2.0, 0.0, 0.0], atol=1e-14)


# ---------------------------------------------------------------------------------------------
# Hessian-vector products: forward mode over the reverse-mode gradient
# ---------------------------------------------------------------------------------------------

def test_hvp_rosenbrock_matches_finite_differences_of_the_gradient():
    r = np.random.default_rng(11)
    x, v = r.uniform(-1.5, 1.5, 12), r.uniform(-1, 1, 12)
    hv = ez.hessian_vector_product(rosenbrock, x, v)
    h = 1e-6
    fd = (ez.gradient(rosenbrock, x + h * v) - ez.gradient(rosenbrock, x - h * v)) / (2 * h)
    close(hv, fd, 1e-7)
    fd_exact = (rosenbrock_grad(x + h * v) - rosenbrock_grad(x - h * v)) / (2 * h)
    close(hv, fd_exact, 1e-7)


def test_hessian_rosenbrock_batched_columns():
    x = np.linspace(-1.2, 1.3, 20)      # 20 columns: one call of 16, one of 4 (+12 padding)
    H = ez.hessian(rosenbrock, x)
    close(H, H.T, 1e-14)
    close(H, central(rosenbrock_grad, x), 1e-7)
    hvs = ez.hessian_vector_product(rosenbrock, x, (np.ones(20), np.arange(20.0)))
    close(hvs[0], H @ np.ones(20), 1e-12)
    close(hvs[1], H @ np.arange(20.0), 1e-12)


def _gmm_test_file():
    from benchmarks.workloads import DATA_DIR
    return os.path.join(DATA_DIR, "gmm", "test.txt")


GMM_TEST = _gmm_test_file()


def _gmm_kernel():
    from benchmarks.workloads.gmm import gmm_objective

    @njit
    def objective(theta, x, gamma, m, K, d):
        alphas = theta[:K]
        means = theta[K:K + K * d].reshape(K, d)
        icf = theta[K + K * d:].reshape(K, -1)
        return gmm_objective(alphas, means, icf, x, gamma, m)
    return objective


@pytest.mark.skipif(not os.path.exists(GMM_TEST), reason="ADBench data not found")
def test_hvp_gmm_matches_finite_differences_of_the_gradient():
    from benchmarks.workloads.gmm import read_gmm
    alphas, means, icf, x, gamma, m = read_gmm(GMM_TEST)
    K, d = means.shape
    theta = np.concatenate([alphas, means.ravel(), icf.ravel()])
    objective = _gmm_kernel()
    r = np.random.default_rng(5)
    for _ in range(2):
        v = r.uniform(-1, 1, theta.size)
        hv = ez.hessian_vector_product(objective, theta, v, x, gamma, m, K, d)
        h = 1e-6
        fd = (ez.gradient(objective, theta + h * v, x, gamma, m, K, d)
              - ez.gradient(objective, theta - h * v, x, gamma, m, K, d)) / (2 * h)
        close(hv, fd, 1e-6)


# ---------------------------------------------------------------------------------------------
# gradients inside @njit code
# ---------------------------------------------------------------------------------------------

@njit
def least_squares(w, X, y):
    s = 0.0
    for i in range(X.shape[0]):
        r = -y[i]
        for j in range(X.shape[1]):
            r += X[i, j] * w[j]
        s += r * r
    return s / X.shape[0]


def make_descent(grad):
    @njit
    def descend(w, X, y, steps, lr):
        dw = np.zeros_like(w)
        for _ in range(steps):
            dw[:] = 0.0
            grad(w, X, y, dw, 1.0)
            for j in range(w.shape[0]):
                w[j] -= lr * dw[j]
        return w
    return descend


def test_gradient_descent_loop_inside_njit_matches_python():
    r = np.random.default_rng(2)
    X = r.standard_normal((40, 3))
    w_true = np.array([1.5, -2.0, 0.5])
    y = X @ w_true
    w0 = np.zeros(3)
    grad = ez.gradient_entry(least_squares, Duplicated(w0.copy(), np.zeros(3)), X, y)
    descend = make_descent(grad)
    w_njit = descend(w0.copy(), X, y, 200, 0.1)

    w_py = w0.copy()
    for _ in range(200):
        dw = np.zeros(3)
        ez.autodiff(least_squares, Duplicated(w_py, dw), X, y)
        w_py -= 0.1 * dw
    np.testing.assert_array_equal(w_njit, w_py)
    np.testing.assert_allclose(w_njit, w_true, atol=1e-6)


def test_forward_entry_inside_njit():
    x = np.linspace(0.1, 1.0, 5)
    fwd = ez.forward_entry(rosenbrock, Duplicated(x, np.ones(5)))

    @njit
    def directional(x, v):
        return fwd(x, v)[1][0]

    assert directional(x, np.ones(5)) == pytest.approx(rosenbrock_grad(x).sum(), rel=1e-13)
