"""Sparse Jacobians (enzyme_py/sparse.py): the pattern found by NaN-seeded forward sweeps equals
the nonzeros of the dense Jacobian, the compressed evaluation equals the dense Jacobian, a
pattern is reused only when no decision depends on the inputs' values, and a kernel whose NaN
run is unreliable (fast-math) is computed dense with a warning."""
import importlib.util
import os

import numpy as np
import pytest
import scipy.sparse as sp
from numba import njit

from enzyme_py import SparseHessian, SparseJacobian, SparseJacobianWarning, hessian, jacobian, sparsity
from enzyme_py.colouring import check_colouring, colour_columns


@njit
def chain(x):
    """A 1-D stencil with a cubic term: tridiagonal."""
    n = x.size
    y = np.empty(n)
    for i in range(n):
        left = x[i - 1] if i > 0 else 0.0
        right = x[i + 1] if i < n - 1 else 0.0
        y[i] = left - 2.0 * x[i] + right + x[i] ** 3
    return y


@njit
def pde(u, out, h):
    """5-point Laplacian with a nonlinear reaction term, zero boundary values."""
    n, m = u.shape
    for i in range(n):
        for j in range(m):
            c = u[i, j]
            s = -4.0 * c
            if i > 0:
                s += u[i - 1, j]
            if i < n - 1:
                s += u[i + 1, j]
            if j > 0:
                s += u[i, j - 1]
            if j < m - 1:
                s += u[i, j + 1]
            out[i, j] = s / (h * h) + np.exp(c) - c * c


@njit
def reprojection(params, cam, pt, obs, ncam):
    """A bundle-adjustment-like residual: observation k sees camera cam[k] (3 parameters) and
    point pt[k] (3 coordinates); the indices are Const."""
    r = np.empty(2 * cam.size)
    for k in range(cam.size):
        c = params[3 * cam[k]:3 * cam[k] + 3]
        p = params[3 * ncam + 3 * pt[k]:3 * ncam + 3 * pt[k] + 3]
        z = p[2] + c[2]
        r[2 * k] = c[0] * p[0] / z - obs[k, 0]
        r[2 * k + 1] = c[1] * p[1] / z - obs[k, 1]
    return r


@njit
def clipped(x):
    """A branch on x's values: the pattern depends on the input."""
    y = np.empty(x.size)
    for i in range(x.size):
        if x[i] > 0.5:
            y[i] = x[i] * x[(i + 1) % x.size]
        else:
            y[i] = np.sin(x[i])
    return y


@njit(fastmath=True)
def fast_chain(x):
    y = np.empty(x.size)
    for i in range(x.size):
        y[i] = x[i] * x[i - 1]
    return y


def _nonzeros(dense):
    return sp.csr_matrix(dense != 0)


def _same_pattern(pattern, dense):
    a, b = (pattern != 0).toarray(), dense != 0
    return np.array_equal(a, b)


def test_chain_pattern_and_values():
    rng = np.random.default_rng(0)
    x = rng.random(23)
    J = SparseJacobian(chain)
    S = J(x)
    D = jacobian(chain, x)
    assert isinstance(S, sp.csr_matrix) and S.shape == (23, 23)
    assert _same_pattern(J.pattern, D)
    assert J.ncolours == 3 and not J.input_specific and J.dense is None
    np.testing.assert_allclose(S.toarray(), D, rtol=1e-12, atol=0)
    x2 = rng.random(23)
    np.testing.assert_allclose(J(x2).toarray(), jacobian(chain, x2), rtol=1e-12, atol=0)
    assert J.detections == 1          # the pattern holds for every input: found once


def test_pde_pattern_values_and_reuse():
    rng = np.random.default_rng(1)
    u, out = rng.random((7, 6)), np.zeros((7, 6))
    J = SparseJacobian(pde)
    S = J(u, 0.1, out=out)
    D = jacobian(pde, u, 0.1, out=out).reshape(42, 42)
    assert _same_pattern(J.pattern, D)
    assert J.pattern.nnz == 5 * 42 - 2 * (7 + 6)
    assert check_colouring(J.pattern, J.colours) and J.ncolours <= 8
    np.testing.assert_allclose(S.toarray(), D, rtol=1e-12, atol=0)
    u2 = rng.random((7, 6))
    S2 = J(u2, 0.1, out=out)
    np.testing.assert_allclose(S2.toarray(), jacobian(pde, u2, 0.1, out=out).reshape(42, 42),
                               rtol=1e-12, atol=0)
    assert J.detections == 1
    J(u2, 0.2, out=out)               # another Const value: the pattern is found again
    assert J.detections == 2


def test_jacobian_sparse_keyword_matches_dense():
    rng = np.random.default_rng(2)
    u, out = rng.random((5, 5)), np.zeros((5, 5))
    S = jacobian(pde, u, 0.3, out=out, sparse=True)
    np.testing.assert_allclose(S.toarray(), jacobian(pde, u, 0.3, out=out).reshape(25, 25),
                               rtol=1e-12, atol=0)
    R = jacobian(pde, u, 0.3, out=out, sparse=True, mode="reverse")      # rows coloured
    np.testing.assert_allclose(R.toarray(), S.toarray(), rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="one int argnums"):
        jacobian(pde, u, 0.3, out=out, sparse=True, argnums=(0,))


def test_block_sparse_residual():
    rng = np.random.default_rng(3)
    ncam, npt, nobs = 3, 8, 14
    cam = rng.integers(0, ncam, nobs)
    pt = rng.integers(0, npt, nobs)
    pt[:npt] = np.arange(npt)             # every point seen
    obs = rng.random((nobs, 2))
    params = rng.random(3 * (ncam + npt)) + 0.5
    J = SparseJacobian(reprojection)
    S = J(params, cam, pt, obs, ncam)
    D = jacobian(reprojection, params, cam, pt, obs, ncam)
    assert not J.input_specific           # the indices are Const: addresses from them are fine
    assert _same_pattern(J.pattern, D)
    assert J.pattern.nnz == nobs * 8      # each row: two camera parameters, c2, two coordinates
    np.testing.assert_allclose(S.toarray(), D, rtol=1e-12, atol=0)


def test_structural_nonzero_found_where_the_value_is_zero():
    """d(x0 * x1)/dx0 = x1 is zero at x1 = 0, but not structurally: the pattern keeps it (NaN
    times zero is NaN), so the pattern holds for other inputs."""
    x = np.array([2.0, 0.0, 1.0])
    J = SparseJacobian(fast_free_product)
    S = J(x)
    assert J.pattern.toarray()[0].tolist() == [1.0, 1.0, 0.0]
    assert S.toarray()[0, 0] == 0.0 and S.toarray()[0, 1] == 2.0


@njit
def fast_free_product(x):
    y = np.empty(2)
    y[0] = x[0] * x[1]
    y[1] = np.sin(x[2])
    return y


def test_branch_on_values_unites_its_arms():
    """clipped's arms both run in the NaN runs (ir_passes transforms/pattern_union.py): row i
    holds x[i] and x[i+1] whichever way x[i] > 0.5 goes; the pattern is found once."""
    rng = np.random.default_rng(4)
    J = SparseJacobian(clipped)
    band = (np.eye(11) + np.roll(np.eye(11), 1, axis=1)) != 0
    for k in range(2):
        x = rng.random(11)
        S = J(x)
        D = jacobian(clipped, x)
        assert np.array_equal(J.pattern.toarray() != 0, band)
        assert not ((D != 0) & ~band).any()
        np.testing.assert_allclose(S.toarray(), D, rtol=1e-12, atol=0)
    assert J.united and not J.input_specific and J.decisions
    assert "branch" in J.decisions[-1][1] or "branch" in J.decisions[0][1]
    assert J.detections == 1


def test_fast_math_falls_back_to_dense():
    x = np.random.default_rng(5).random(6)
    J = SparseJacobian(fast_chain)
    with pytest.warns(SparseJacobianWarning, match="fast-math"):
        S = J(x)
    assert J.dense is not None and "fast-math" in J.dense
    assert J.pattern.nnz == 36 and J.ncolours == 6
    np.testing.assert_allclose(S.toarray(), jacobian(fast_chain, x), rtol=1e-12, atol=0)


def test_given_pattern_is_used():
    x = np.random.default_rng(6).random(9)
    band = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(9, 9))
    J = SparseJacobian(chain, pattern=band)
    np.testing.assert_allclose(J(x).toarray(), jacobian(chain, x), rtol=1e-12, atol=0)
    assert J.detections == 0 and J.ncolours == 3


def test_colouring_is_valid_on_random_patterns():
    rng = np.random.default_rng(7)
    for _ in range(5):
        p = sp.random(30, 40, density=0.1, random_state=rng, format="csr")
        c = colour_columns(p)
        assert check_colouring(p, c)
        assert c.max() + 1 <= 40


def _fake_run(pattern):
    """run(sets) of a kernel whose Jacobian has this pattern: NaN where a row depends on the set."""
    csc = sp.csc_matrix(pattern)

    def run(sets):
        out = np.zeros((len(sets), pattern.shape[0]), dtype=bool)
        for k, members in enumerate(sets):
            out[k, csc[:, np.atleast_1d(members)].indices] = True
        return out
    return run


@pytest.mark.parametrize("density", [0.0005, 0.003])
def test_residue_design_finds_the_exact_pattern(density):
    rng = np.random.default_rng(8)
    true = sp.random(300, 9000, density=density, random_state=rng, format="csr")
    true.data[:] = 1.0
    true = true + sp.eye(300, 9000)          # every row depends on something
    found = sparsity.find_pattern(_fake_run(true), 9000, 300, 16)
    assert np.array_equal(found.toarray() != 0, true.toarray() != 0)


def test_residue_design_on_a_kernel(monkeypatch):
    monkeypatch.setattr(sparsity, "EXACT_BELOW", 10)
    u, out = np.random.default_rng(9).random((30, 30)), np.zeros((30, 30))
    J = SparseJacobian(pde)
    S = J(u, 0.1, out=out)
    D = jacobian(pde, u, 0.1, out=out).reshape(900, 900)
    assert _same_pattern(J.pattern, D)
    np.testing.assert_allclose(S.toarray(), D, rtol=1e-12, atol=0)


@njit
def scaled_chain(x, c):
    y = np.empty(x.size - 1)
    for i in range(x.size - 1):
        y[i] = x[i] * c[i] + 2.0 * x[i + 1]
    return y


def test_infinite_partial_keeps_the_strong_zero():
    """c[2] = inf: the compressed lane that seeds x[3] but not x[2] computes 0 * inf unguarded;
    it is redone under the strong zero, so J[2, 3] is 2 as jacobian gives it, not NaN."""
    x = np.array([1.0, 4.0, 0.5, 9.0, 2.0, 3.0])
    c = np.array([1.0, 2.0, np.inf, 3.0, 4.0])
    J = SparseJacobian(scaled_chain)
    S = J(x, c).toarray()
    D = jacobian(scaled_chain, x, c)
    assert S[2, 3] == 2.0 and np.isinf(S[2, 2])
    np.testing.assert_array_equal(S[D != 0], D[D != 0])


def test_least_squares_example():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples",
                        "sparse_least_squares.py")
    spec = importlib.util.spec_from_file_location("example_sparse_least_squares", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res, fd, J = mod.main(["--n", "12"])
    assert res.success and res.cost < 1e-20
    np.testing.assert_allclose(res.x, fd.x, atol=1e-8)
    assert J.detections == 1 and J.pattern.nnz == 5 * 144 - 4 * 12


@njit
def control(x, dt):
    """A chain-structured objective (a discretised control problem): tridiagonal Hessian."""
    s = 0.0
    for i in range(x.size - 1):
        d = x[i + 1] - x[i]
        s += d * d / dt + dt * np.cos(x[i]) * x[i + 1] ** 2
    return s


def test_sparse_hessian_of_a_chain():
    rng = np.random.default_rng(10)
    x = rng.random(40)
    H = SparseHessian(control)
    S = H(x, 0.1)
    D = hessian(control, x, 0.1)
    assert S.shape == (40, 40) and H.ncolours == 3 and not H.input_specific
    assert _same_pattern(H.pattern, D)
    np.testing.assert_allclose(S.toarray(), D, rtol=1e-12, atol=1e-12)
    x2 = rng.random(40)
    np.testing.assert_allclose(hessian(control, x2, 0.1, sparse=True).toarray(),
                               hessian(control, x2, 0.1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(H(x2, 0.1).toarray(), hessian(control, x2, 0.1), rtol=1e-12,
                               atol=1e-12)
    assert H.detections == 1
