"""np.linalg.eig, eigvals and np.roots of real matrices (rules/lapack_eig_real.py) against finite
differences in reverse and forward mode (fd_modes.py): eigenvalues, eigenvectors under a loss
their signs do not change, a polynomial's roots, eig inside a loop; repeated eigenvalues (finite
for eigvals, inf or nan for eigenvectors) and complex ones (the primal raises; called directly,
the wrapper's derivative is nan)."""
import numpy as np
import pytest
from numba import njit, types
from numba.np.linalg import _LAPACK

from enzyme_py import Duplicated, Forward, UnsupportedError, autodiff
from fd_modes import check_batched_forward, check_modes


@njit
def eig_use(A, c, W):
    # invariant to the eigenvectors' signs (LAPACK picks them) and to the eigenvalues' order
    # (sgeev's may differ from dgeev's, and the finite differences run in float64)
    w, V = np.linalg.eig(A)
    return np.sum(np.sort(w) * c) + np.sum(np.sum(V * V * W[:, 0:1], axis=0) * w)


@njit
def eigvals_use(A, c):
    return np.sum(np.linalg.eigvals(A) * c)


@njit
def roots_use(p, c):
    return np.sum(np.roots(p) * c)


@njit
def eig_steps(A, W):
    s = 0.0
    B = A.copy()
    for k in range(3):
        w, V = np.linalg.eig(B)
        s += np.sum(W * V * V) + k * np.sum(w * w)
        B = B + 0.1 * np.diag(w)
    return s


def real_spectrum(r, n, dtype, order="C"):
    """A nonsymmetric matrix with distinct real eigenvalues."""
    m = r.uniform(-1, 1, (n, n))
    a = m @ m.T + np.diag(np.arange(n) * 1.5) + 0.2 * r.uniform(-1, 1, (n, n))
    a = a.astype(dtype)
    return np.asfortranarray(a) if order == "F" else a


@pytest.mark.parametrize("order,dtype", [("C", np.float64), ("F", np.float32)])
def test_eig_values_and_vectors(order, dtype):
    r = np.random.default_rng(1)
    A = real_spectrum(r, 4, dtype, order)
    check_modes(eig_use, A, r.uniform(-1, 1, 4).astype(dtype), r.uniform(-1, 1, (4, 4)).astype(dtype))


def test_eigvals_and_batched_eig():
    r = np.random.default_rng(2)
    A = real_spectrum(r, 5, np.float64)
    check_modes(eigvals_use, A, r.uniform(-1, 1, 5))
    check_batched_forward(eig_use, A[:4, :4].copy(), r.uniform(-1, 1, 4), r.uniform(-1, 1, (4, 4)),
                          width=2)


def test_roots():
    r = np.random.default_rng(3)
    p = np.poly(np.array([1.0, -2.0, 3.5, 0.5])) + 0.01 * r.uniform(-1, 1, 5)
    check_modes(roots_use, p, r.uniform(-1, 1, 4))


def test_eig_in_a_loop():
    r = np.random.default_rng(4)
    check_modes(eig_steps, real_spectrum(r, 4, np.float64), r.uniform(-1, 1, (4, 4)))


@njit
def eigenvectors_weighted(A):
    return np.sum(np.linalg.eig(A)[1] ** 2 * np.arange(9.0).reshape(3, 3))


def test_repeated_eigenvalues():
    """eigvals of 2 I: the derivative of the trace, in both modes; the eigenvectors of a matrix
    with a repeated eigenvalue are not unique: inf or nan."""
    A, c = 2.0 * np.eye(3), np.ones(3)
    dA = np.zeros_like(A)
    autodiff(eigvals_use, Duplicated(A.copy(), dA), c, seed=1.0)
    np.testing.assert_allclose(dA, np.eye(3), atol=1e-12)
    t = autodiff(eigvals_use, Duplicated(A.copy(), np.arange(9.0).reshape(3, 3)), c, mode=Forward)
    assert abs(t - 12.0) < 1e-12                     # the direction's trace
    Q = np.array([[1.0, 0.3, 0.2], [0.1, 1.0, -0.4], [0.5, 0.2, 1.0]])
    B = Q @ np.diag([2.0, 2.0, 3.0]) @ np.linalg.inv(Q)
    dB = np.zeros_like(B)
    autodiff(eigenvectors_weighted, Duplicated(B.copy(), dB), seed=1.0)
    assert not np.all(np.isfinite(dB))
    t = autodiff(eigenvectors_weighted, Duplicated(B.copy(), np.ones_like(B)), mode=Forward)
    assert not np.isfinite(t)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_complex_eigenvalues_raise(mode):
    """Numba's eigvals of a real matrix raises on complex eigenvalues, before any derivative;
    the caller's arrays are left as they were."""
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    dR = np.ones_like(R)
    kw = {"seed": 1.0} if mode == "reverse" else {"mode": Forward}
    with pytest.raises(ValueError, match="domain change"):
        autodiff(eigvals_use, Duplicated(R, dR), np.ones(3), **kw)
    assert np.array_equal(dR, np.ones_like(R)) and R[1, 0] == 1.0


# the wrapper called directly, as a host that does not raise on complex eigenvalues would
rgeev = _LAPACK().numba_ez_rgeev(types.float64)


@njit
def raw_eigvals(A):
    n = A.shape[0]
    a = np.asfortranarray(A.copy())
    wr, wi, vl, vr = np.empty(n), np.empty(n), np.empty((n, n)), np.empty((n, n))
    rgeev(ord("d"), ord("N"), ord("N"), n, a.ctypes, n, wr.ctypes, wi.ctypes, vl.ctypes, n,
          vr.ctypes, n)
    return np.sum(wr) + np.sum(wi)


@njit
def raw_left(A):
    n = A.shape[0]
    a = np.asfortranarray(A.copy())
    wr, wi, vl, vr = np.empty(n), np.empty(n), np.empty((n, n)), np.empty((n, n))
    rgeev(ord("d"), ord("V"), ord("N"), n, a.ctypes, n, wr.ctypes, wi.ctypes, vl.ctypes, n,
          vr.ctypes, n)
    return np.sum(wr)


def test_wrapper_called_directly():
    """Real eigenvalues: d(sum wr + sum wi)/dA = I (wi' = 0); a complex pair: every adjoint
    and tangent nan (not computed); left eigenvectors are refused."""
    A = np.diag([1.0, 2.0, 3.0]) + 0.1
    dA = np.zeros_like(A)
    autodiff(raw_eigvals, Duplicated(A, dA), seed=1.0)
    np.testing.assert_allclose(dA, np.eye(3), atol=1e-12)
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    dR = np.zeros_like(R)
    autodiff(raw_eigvals, Duplicated(R, dR), seed=1.0)
    assert np.all(np.isnan(dR))
    assert np.isnan(autodiff(raw_eigvals, Duplicated(R, np.ones_like(R)), mode=Forward))
    with pytest.raises(UnsupportedError, match="left eigenvectors"):
        autodiff(raw_left, Duplicated(A, np.zeros_like(A)), seed=1.0)
