"""Complex LU (rules/lapack_lu.py, "Complex data"): np.linalg.det, slogdet (zgetrf, cgetrf as
Numba calls them) and inv (getrf then getri) on complex matrices, in reverse mode against the
analytic adjoints and finite differences, in forward mode against the analytic tangents."""
import numba
import numpy as np
import pytest

from enzyme_py import Duplicated, Forward, autodiff, check_gradient

RNG = np.random.default_rng(5)
W = 0.3 - 0.7j


def crandn(*shape, dtype=np.complex128):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


def matrix(n, dtype=np.complex128):
    """Well conditioned, and rows reversed so that getrf interchanges rows."""
    return np.ascontiguousarray((crandn(n, n) + 3 * np.eye(n))[::-1]).astype(dtype)


@numba.njit
def det_into(a, out):
    out[0] = np.linalg.det(a)


@numba.njit
def logabsdet_into(a, out):
    s, l = np.linalg.slogdet(a)
    out[0] = l


@numba.njit
def slogdet_loss(a):
    s, l = np.linalg.slogdet(a)
    return (s * W).real + 1.5 * l


@numba.njit
def inv_into(a, out):
    out[:] = np.linalg.inv(a)


def reverse(kernel, a, out, seed):
    da = np.zeros_like(a)
    autodiff(kernel, Duplicated(a.copy(), da), Duplicated(out, seed.copy()))
    return da


def tangent(kernel, a, ta, out):
    tout = np.zeros_like(out)
    autodiff(kernel, Duplicated(a.copy(), ta.copy()), Duplicated(out, tout), mode=Forward)
    return tout


@pytest.mark.parametrize("dtype, tol", [(np.complex128, 1e-12), (np.complex64, 2e-4)])
def test_det_adjoint_and_tangent(dtype, tol):
    a, ta = matrix(4, dtype), crandn(4, 4, dtype=dtype)
    out = np.zeros(1, dtype)
    d, v = np.linalg.det(a.astype(complex)), np.linalg.inv(a.astype(complex))
    # d det / dA = det A^{-T}: with L = Re(conj(s) det), shadow(A) = s conj(det A^{-T})
    da = reverse(det_into, a, out, np.array([W], dtype))
    np.testing.assert_allclose(da, W * np.conj(d * v.T), rtol=tol, atol=tol)
    np.testing.assert_allclose(tangent(det_into, a, ta, out), [d * np.trace(v @ ta)], rtol=tol)


@pytest.mark.parametrize("dtype, tol", [(np.complex128, 1e-12), (np.complex64, 2e-4)])
def test_logabsdet_adjoint_and_tangent(dtype, tol):
    a, ta = matrix(4, dtype), crandn(4, 4, dtype=dtype)
    out = np.zeros(1, a.real.dtype)
    v = np.linalg.inv(a.astype(complex))
    # log|det A| = Re log det A: shadow(A) = conj(A^{-T}), tangent Re tr(A^{-1} A')
    da = reverse(logabsdet_into, a, out, np.ones(1, out.dtype))
    np.testing.assert_allclose(da, np.conj(v.T), rtol=tol, atol=tol)
    np.testing.assert_allclose(tangent(logabsdet_into, a, ta, out), [np.trace(v @ ta).real],
                               rtol=tol)


@pytest.mark.parametrize("dtype, tol", [(np.complex128, 1e-12), (np.complex64, 2e-4)])
def test_inv_adjoint_and_tangent(dtype, tol):
    a, ta, s = matrix(5, dtype), crandn(5, 5, dtype=dtype), crandn(5, 5, dtype=dtype)
    out = np.zeros_like(a)
    v = np.linalg.inv(a.astype(complex))
    # dV = -V dA V: shadow(A) = -V^H S V^H
    da = reverse(inv_into, a, out, s)
    np.testing.assert_allclose(da, -v.conj().T @ s @ v.conj().T, rtol=tol, atol=tol)
    np.testing.assert_allclose(tangent(inv_into, a, ta, out), -v @ ta @ v, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("kernel", [det_into, inv_into])
def test_against_finite_differences(kernel, dtype):
    a = matrix(3, dtype)
    out = np.zeros(1, dtype) if kernel is det_into else np.zeros_like(a)
    extra = {} if dtype == np.complex128 else {"fd_dtype": np.float64}
    report = check_gradient(kernel, Duplicated(a, np.zeros_like(a)),
                            Duplicated(out, np.zeros_like(out)), rng=3, **extra)
    assert report.passed, str(report)


def test_slogdet_sign_and_log_against_finite_differences():
    a = matrix(3)
    report = check_gradient(slogdet_loss, Duplicated(a, np.zeros_like(a)), rng=1)
    assert report.passed, str(report)
    ta = crandn(3, 3)
    t = autodiff(slogdet_loss, Duplicated(a.copy(), ta.copy()), mode=Forward)
    h = 1e-6
    fd = (slogdet_loss(a + h * ta) - slogdet_loss(a - h * ta)) / (2 * h)
    np.testing.assert_allclose(t, fd, rtol=1e-6)
