"""Forward mode over reverse mode with an array allocated in a loop: LLVM's loop rotation
allocates in the preheader and in the latch, so the data accessor reads a phi of the two
handles. Forward mode called the accessor again on the primal handle for the shadow: the
"shadow" was the primal's data, zeroed and overwritten with tangents (wrong H v, no error).

s = sum_t sum_i (W h0)_i^3 over 2 iterations: grad_W s = 6 g^2 h0^T with g = W h0, and
H v = 12 (g * V h0) h0^T."""
import numpy as np
import pytest
from numba import njit

import enzyme_py
from enzyme_py import Const, Duplicated, Forward, autodiff


@njit
def energy(wf, h0):
    s = 0.0
    for _ in range(2):
        g = np.zeros(3)
        for i in range(3):
            for j in range(3):
                g[i] += wf[3 * i + j] * h0[j]
        s += np.sum(g * g * g)
    return s


@njit
def two_arrays(wf, h0):
    s = 0.0
    for _ in range(2):
        g = np.zeros(3)
        k = np.zeros(3)
        for i in range(3):
            for j in range(3):
                g[i] += wf[3 * i + j] * h0[j]
                k[i] += wf[3 * j + i] * h0[j]
        s += np.sum(g * g * k)
    return s


@njit
def empty_written(wf, h0):
    s = 0.0
    for _ in range(3):
        g = np.empty(3)
        for i in range(3):
            g[i] = wf[3 * i] * h0[0] + wf[3 * i + 1] * h0[1] + wf[3 * i + 2] * h0[2]
        s += np.sum(g * g * g)
    return s


@njit
def half_norm_of_gradient(wf, h0):      # 0.5 |grad_W energy|^2: its tangent along v is <grad, H v>
    gw = np.zeros(9)
    autodiff(energy, Duplicated(wf, gw), Const(h0))
    s = 0.0
    for i in range(9):
        s += 0.5 * gw[i] * gw[i]
    return s


def gradient(f, wf, h0):
    gw = np.zeros(9)
    autodiff(f, Duplicated(wf.copy(), gw), Const(h0))
    return gw


def central(f, wf, h0, v, h=1e-6):
    return (gradient(f, wf + h * v, h0) - gradient(f, wf - h * v, h0)) / (2 * h)


def analytic(wf, h0, v, u=None):
    """(grad_W energy, its derivative along wf -> v and h0 -> u)."""
    W, V = wf.reshape(3, 3), v.reshape(3, 3)
    u = np.zeros(3) if u is None else u
    g, dg = W @ h0, V @ h0 + W @ u
    return (6 * np.outer(g * g, h0)).ravel(), (12 * np.outer(g * dg, h0) + 6 * np.outer(g * g, u)).ravel()


def data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(9), rng.standard_normal(3), rng.standard_normal(9), rng.standard_normal(3)


def test_hessian_vector_product():
    wf, h0, v, _ = data()
    hv = np.asarray(enzyme_py.hessian_vector_product(energy, wf, v, h0))
    np.testing.assert_allclose(hv, analytic(wf, h0, v)[1], rtol=1e-10)
    np.testing.assert_allclose(hv, central(energy, wf, h0, v), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", [two_arrays, empty_written])
def test_variants_against_central_differences(f):
    wf, h0, v, _ = data(1)
    hv = np.asarray(enzyme_py.hessian_vector_product(f, wf, v, h0))
    np.testing.assert_allclose(hv, central(f, wf, h0, v), rtol=1e-6, atol=1e-7)


def test_nested_autodiff_forward_over_reverse():
    wf, h0, v, u = data()
    grad, hv = analytic(wf, h0, v)
    t = autodiff(half_norm_of_gradient, Duplicated(wf.copy(), v.copy()), Const(h0), mode=Forward)
    np.testing.assert_allclose(t, grad @ hv, rtol=1e-10)
    np.testing.assert_allclose(t, grad @ central(energy, wf, h0, v), rtol=1e-6)
    grad, dgrad = analytic(wf, h0, v, u)        # h0 differentiated too
    t = autodiff(half_norm_of_gradient, Duplicated(wf.copy(), v.copy()), Duplicated(h0.copy(), u.copy()),
                 mode=Forward)
    np.testing.assert_allclose(t, grad @ dgrad, rtol=1e-10)
