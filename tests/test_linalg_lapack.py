"""LAPACK calls inside kernels (rules/lapack*.py) beyond their finite-difference cases (those:
tests/rule_cases/, run by test_rule_cases.py): eigvals of a real matrix (eig and roots:
test_linalg_eig.py); at repeated eigenvalues eigvalsh's derivative stays finite and eigh's
eigenvector derivative is undefined."""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, autodiff
from fd_modes import check_modes
from rule_cases import spd
from rule_cases.lapack_spectral import eigvalsh_use


@njit
def eig_sum(A):
    return np.sum(np.linalg.eigvals(A).real)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_eigvals_of_a_real_matrix(dtype):
    """Real eigenvalues (rules/lapack_eig_real.py)."""
    r = np.random.default_rng(4)
    A = spd(r, 3, dtype) + np.diag(np.arange(3.0)).astype(dtype) + 0.1 * r.uniform(-1, 1, (3, 3)).astype(dtype)
    check_modes(eig_sum, A)


@njit
def eigenvectors_weighted(A):
    return np.sum(np.linalg.eigh(A)[1] * np.arange(9.0).reshape(3, 3))


def test_repeated_eigenvalues():
    """eigvalsh stays finite (the eigenvalues' derivative is V diag(c) V^T, exact for equal
    weights on the repeated ones); eigh's eigenvector derivative is undefined: inf or nan."""
    A = np.eye(3) * 2.0
    c = np.ones(3)
    dA = np.zeros_like(A)
    autodiff(eigvalsh_use, Duplicated(A.copy(), dA), Duplicated(c, np.zeros(3)), seed=1.0)
    np.testing.assert_allclose(np.tril(dA), np.eye(3), atol=1e-12)    # d trace(A) / dA
    dA = np.zeros_like(A)
    autodiff(eigenvectors_weighted, Duplicated(A.copy(), dA), seed=1.0)
    assert not np.all(np.isfinite(dA))
