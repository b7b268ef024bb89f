"""NumPy functions that the coverage table (tools/numpy_coverage) found refused or wrong and that
now pass, each against finite differences in reverse and forward mode (fd_modes.py), float64 (and
float32 where its derivative takes another route); and the table's generation on two functions."""
import numpy as np
import pytest
from numba import njit

from fd_modes import check_modes, with_single


def _weigh(r):
    f = r.ravel()
    s = 0.0
    for i in range(f.size):
        s += f[i] * (1.0 + 0.25 * i)
    return s


weigh = njit(_weigh)


@njit
def percentile_alone(x):                # a copy read only through a pointer kept in a struct
    return np.percentile(x, 30.0)


@njit
def quantiles(x):
    return np.quantile(x, 0.75) + 2.0 * np.quantile(x, 0.2)


@njit
def median_alone(x):
    return np.median(x)


@njit
def nan_percentile(x):                  # forward: a handle kept in a struct, refcounted there
    return np.nanpercentile(x, 30.0) + np.nanquantile(x, 0.6)


@njit
def weighed_product(A, B):              # forward: a phi of two allocation handles
    return weigh(A @ B)


@njit
def weighed_transpose_product(A, B):
    return weigh(A.transpose() @ B)


@njit
def matrix_norm(A):                     # forward: ravel's reshape call no longer repeated
    return np.linalg.norm(A) * A[0, 0]


@njit
def eig_eigvals_roots(A, p):            # real matrices: rules/lapack_eig_real.py
    # invariant to the eigenvalues' order (sgeev and dgeev may differ: the finite differences
    # run in float64) and to the eigenvectors' signs
    w, v = np.linalg.eig(A)
    rows = np.sum(v * v * np.arange(1.0, 1.0 + v.shape[0]).reshape(-1, 1), axis=0)
    return weigh(np.sort(w)) + np.sum(w * rows) + weigh(np.sort(np.linalg.eigvals(A))) + \
        weigh(np.sort(np.roots(p)))


def _real_spectrum(r, dt):
    """A nonsymmetric 3 x 3 matrix with distinct real eigenvalues, and a cubic with distinct
    real roots."""
    m = r.uniform(-1, 1, (3, 3))
    a = m @ m.T + np.diag([0.0, 1.5, 3.0]) + 0.2 * r.uniform(-1, 1, (3, 3))
    return [a.astype(dt), np.poly([1.0, -2.0, 3.5]).astype(dt)]


def _sample(r, n, dt):
    return r.permutation(np.linspace(0.15, 0.85, n)).astype(dt)


def _mat(r, shape, dt):
    return (r.uniform(-1, 1, shape) + np.eye(*shape)).astype(dt)


CASES = [
    (percentile_alone, lambda r, dt: [_sample(r, 7, dt)]),
    (quantiles, lambda r, dt: [_sample(r, 9, dt)]),
    (median_alone, lambda r, dt: [_sample(r, 6, dt)]),
    (nan_percentile, lambda r, dt: [_sample(r, 6, dt)]),
    (weighed_product, lambda r, dt: [_mat(r, (3, 4), dt), _mat(r, (4, 2), dt)]),
    (weighed_transpose_product, lambda r, dt: [_mat(r, (3, 3), dt), _mat(r, (3, 3), dt)]),
    (matrix_norm, lambda r, dt: [_mat(r, (3, 4), dt)]),
    (eig_eigvals_roots, _real_spectrum),
]


# float32 for one of the quantile family (nanpercentile: its sort, NaN partition and handle
# kept in a struct), `@` (single-precision BLAS) and the norm; the others' float32 code differs
# from their float64 code only in the width of the same operations
SINGLE = {nan_percentile, weighed_product, matrix_norm}


@pytest.mark.parametrize("kernel,make,dtype", with_single(CASES, SINGLE))
def test_numpy_functions(kernel, make, dtype):
    check_modes(kernel, *make(np.random.default_rng(3), dtype))


def test_table_generation(tmp_path, capsys):
    from tools.numpy_coverage.__main__ import main
    out = tmp_path / "coverage.md"
    assert main(["--only", "sin", "--only", "argmax", "--out", str(out), "--quiet"]) == 0
    text = out.read_text()
    assert "python -m tools.numpy_coverage" in text
    assert "| `sin` | pass | pass | pass |  |" in text
    assert "| `argmax` | no derivative | no derivative | no derivative |" in text
    assert "**1 of 1 functions with a derivative pass in both modes (100.0%).**" in text
    assert "**Complex inputs: 1 of the 1 that Numba compiles for complex128 pass" in text


def test_catalog_entries_build():
    """Every entry names known inputs, and every kernel source compiles as Python."""
    from tools.numpy_coverage.catalog import ALL_GROUPS
    from tools.numpy_coverage.inputs import MAKERS
    from tools.numpy_coverage.kernels import build
    names = [e for _, es in ALL_GROUPS for e in es]
    assert len(names) > 150
    for e in names:
        if e.differentiable:
            assert set(e.params) <= set(MAKERS), e.name
            build(e.name, e.expr, list(e.params))
        else:
            assert e.why, e.name


@njit
def scaled_steps(x, t, out):            # np.ldexp, np.nextafter, np.spacing elementwise
    out[:] = 3.0 * np.ldexp(x, 3) + 2.0 * np.nextafter(x, t) + np.spacing(x) * 1e6


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ldexp_nextafter_spacing_analytic(dtype):
    """d out / d x = 3 * 2^3 + 2 (nextafter's slope) + 0 (spacing is piecewise constant);
    nothing reaches t. Reverse and forward."""
    from enzyme_py import Duplicated, Forward, autodiff
    x = np.linspace(0.3, 2.0, 5).astype(dtype)
    t = np.full(5, 10.0, dtype)
    out = np.zeros(5, dtype)
    w = np.arange(1.0, 6.0).astype(dtype)
    dx, dt, dout = np.zeros_like(x), np.zeros_like(t), w.copy()
    autodiff(scaled_steps, Duplicated(x, dx), Duplicated(t, dt), Duplicated(out, dout))
    np.testing.assert_allclose(dx, 26.0 * w, rtol=1e-6)
    assert not dt.any() and not dout.any()
    dx, dt, dout = w.copy(), np.ones_like(t), np.zeros_like(out)
    autodiff(scaled_steps, Duplicated(x, dx), Duplicated(t, dt), Duplicated(out, dout),
             mode=Forward)
    np.testing.assert_allclose(dout, 26.0 * w, rtol=1e-6)
