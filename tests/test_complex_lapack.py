"""Complex LAPACK beyond LU: norms (rules/blas.py Nrm2), Cholesky (rules/lapack_lu.py Potrf),
Hermitian eigendecompositions, SVD (rules/lapack_spectral.py), QR (rules/lapack_qr.py), lstsq
(rules/lapack_lstsq.py) and eigenvalues (rules/lapack_eig.py), "Complex data": reverse mode
against analytic adjoints and finite differences, forward mode against analytic tangents. A
Hermitian input's triangle stands for the whole matrix (LAPACK reads one triangle and the real
part of the diagonal), so adjoints are compared with tangents through <shadow, A'> summed over
that triangle; eigenvectors and singular vectors are checked through losses their phases leave
unchanged."""
import numba
import numpy as np
import pytest

from enzyme_py import Duplicated, Forward, autodiff, check_gradient

from test_complex_lu import reverse, tangent

RNG = np.random.default_rng(11)
TOLS = [(np.complex128, 1e-11), (np.complex64, 3e-4)]


def crandn(*shape, dtype=np.complex128):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


def hermitian(n, dtype=np.complex128, shift=4.0):
    b = crandn(n, n)
    return (b @ b.conj().T + shift * np.eye(n)).astype(dtype)


def fd_options(dtype):
    return {} if dtype == np.complex128 else {"fd_dtype": np.float64}


def lower_pairing(da, ta):
    """Re <da, ta> over the lower triangle (Numba's LAPACK calls read it, in C order)."""
    return np.sum((np.conj(da) * ta)[np.tril_indices(da.shape[0])]).real


@numba.njit
def norm_into(x, out):
    out[0] = np.linalg.norm(x)


@numba.njit
def norm_strided(x, out):
    out[0] = np.linalg.norm(x[::2])


@numba.njit
def chol_into(a, out):
    out[:] = np.linalg.cholesky(a)


@pytest.mark.parametrize("dtype, tol", TOLS)
def test_norm_adjoint_and_tangent(dtype, tol):
    x, tx = crandn(6, dtype=dtype), crandn(6, dtype=dtype)
    out = np.zeros(1, x.real.dtype)
    r = np.linalg.norm(x.astype(complex))
    # |x| = sqrt(sum Re^2 + Im^2): shadow x / |x|, tangent Re <x, x'> / |x|
    np.testing.assert_allclose(reverse(norm_into, x, out, np.ones(1, out.dtype)), x / r, rtol=tol)
    np.testing.assert_allclose(tangent(norm_into, x, tx, out), [np.vdot(x, tx).real / r], rtol=tol)


def test_strided_norm_against_finite_differences():
    x = crandn(7)
    report = check_gradient(norm_strided, Duplicated(x, np.zeros_like(x)),
                            Duplicated(np.zeros(1), np.zeros(1)), rng=2)
    assert report.passed, str(report)


@pytest.mark.parametrize("dtype, tol", TOLS)
def test_cholesky_tangent_and_adjoint(dtype, tol):
    a, s = hermitian(4, dtype), crandn(4, 4, dtype=dtype)
    ta = crandn(4, 4)
    ta = (ta + ta.conj().T).astype(dtype)
    out = np.zeros_like(a)
    low = np.linalg.cholesky(a.astype(complex))
    inv = np.linalg.inv(low)
    # L' = L Phi(L^{-1} A' L^{-H}), Phi: the lower triangle, its diagonal halved
    phi = np.tril(inv @ ta @ inv.conj().T)
    phi[np.diag_indices(4)] *= 0.5
    t = tangent(chol_into, a, ta, out)
    np.testing.assert_allclose(t, low @ phi, rtol=tol, atol=tol)
    # the adjoint pairs with every Hermitian tangent: Re <S, L'> = Re <shadow(A), A'> (lower)
    da = reverse(chol_into, a, out, s)
    assert np.all(da[np.triu_indices(4, 1)] == 0) and np.all(da.diagonal().imag == 0)
    np.testing.assert_allclose(lower_pairing(da, ta), np.vdot(s, t).real, rtol=tol)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_cholesky_against_finite_differences(dtype):
    a = hermitian(3, dtype)
    out = np.zeros_like(a)
    report = check_gradient(chol_into, Duplicated(a, np.zeros_like(a)),
                            Duplicated(out, np.zeros_like(out)), rng=3, **fd_options(dtype))
    assert report.passed, str(report)


@numba.njit
def eigvalsh_into(a, out):
    out[:] = np.linalg.eigvalsh(a)


@numba.njit
def eigh_weights(a, out):
    """|V|^2 and w: invariant under each eigenvector's phase."""
    w, v = np.linalg.eigh(a)
    out[:, :] = np.abs(v) ** 2
    out[0, :] += w


def eigen_tangents(a, ta):
    """w' = diag(V^H A' V) and V' = V (F o V^H A' V) in complex128."""
    w, v = np.linalg.eigh(a.astype(complex))
    t = v.conj().T @ ta @ v
    gap = w[None, :] - w[:, None]
    np.fill_diagonal(gap, 1.0)
    f = 1.0 / gap
    np.fill_diagonal(f, 0.0)
    return w, v, np.diag(t).real, v @ (f * t)


@pytest.mark.parametrize("dtype, tol", TOLS)
def test_eigvalsh_tangent_and_adjoint(dtype, tol):
    b = crandn(4, 4)
    a, ta = (b + b.conj().T).astype(dtype), crandn(4, 4)
    ta = (ta + ta.conj().T).astype(dtype)
    out, s = np.zeros(4, a.real.dtype), RNG.normal(size=4).astype(a.real.dtype)
    _, v, dw, _ = eigen_tangents(a, ta)
    np.testing.assert_allclose(tangent(eigvalsh_into, a, ta, out), dw, rtol=tol, atol=tol)
    # shadow(A): the lower triangle of V diag(s) V^H folded (off the diagonal twice, real on it)
    g = v @ np.diag(s) @ v.conj().T
    da = reverse(eigvalsh_into, a, out, s)
    want = np.tril(2 * g, -1) + np.diag(g.diagonal().real)
    np.testing.assert_allclose(da, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype, tol", TOLS)
def test_eigh_gauge_invariant_tangent_and_adjoint(dtype, tol):
    b = crandn(4, 4)
    a, ta = (b + b.conj().T).astype(dtype), crandn(4, 4)
    ta = (ta + ta.conj().T).astype(dtype)
    out, s = np.zeros((4, 4), a.real.dtype), RNG.normal(size=(4, 4)).astype(a.real.dtype)
    _, v, dw, dv = eigen_tangents(a, ta)
    want = 2 * (np.conj(v) * dv).real
    want[0] += dw
    t = tangent(eigh_weights, a, ta, out)
    np.testing.assert_allclose(t, want, rtol=tol, atol=tol)
    da = reverse(eigh_weights, a, out, s)
    np.testing.assert_allclose(lower_pairing(da, ta), np.sum(s * want), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_eigh_against_finite_differences(dtype):
    b = crandn(3, 3)
    a = (b + b.conj().T).astype(dtype)
    out = np.zeros((3, 3), a.real.dtype)
    report = check_gradient(eigh_weights, Duplicated(a, np.zeros_like(a)),
                            Duplicated(out, np.zeros_like(out)), rng=4, **fd_options(dtype))
    assert report.passed, str(report)


@numba.njit
def qr_into(a, q, r):
    qq, rr = np.linalg.qr(a)
    q[:] = qq
    r[:] = rr


def qr_tangents(a, ta):
    """Q' = A' R^{-1} - Q Z, R' = Z R with X = Q^H A' R^{-1}, Z = triu(X) + tril(X, -1)^H and
    Re X on the diagonal (R's diagonal stays real), for m >= n, in complex128."""
    q, r = np.linalg.qr(a.astype(complex))
    ri = np.linalg.inv(r)
    x = q.conj().T @ ta @ ri
    z = np.triu(x, 1) + np.tril(x, -1).conj().T + np.diag(x.diagonal().real)
    return q, r, ta @ ri - q @ z, z @ r


@pytest.mark.parametrize("dtype, tol", TOLS)
def test_qr_tangent_and_adjoint(dtype, tol):
    a, ta = crandn(5, 3, dtype=dtype), crandn(5, 3, dtype=dtype)
    q, r = np.zeros((5, 3), dtype), np.zeros((3, 3), dtype)
    sq, sr = crandn(5, 3, dtype=dtype), crandn(3, 3, dtype=dtype)
    _, _, dq, dr = qr_tangents(a, ta)
    tq, tr = np.zeros_like(q), np.zeros_like(r)
    autodiff(qr_into, Duplicated(a.copy(), ta.copy()), Duplicated(q, tq), Duplicated(r, tr),
             mode=Forward)
    np.testing.assert_allclose(tq, dq, rtol=tol, atol=tol)
    np.testing.assert_allclose(tr, dr, rtol=tol, atol=tol)
    da = np.zeros_like(a)
    autodiff(qr_into, Duplicated(a.copy(), da), Duplicated(q, sq.copy()), Duplicated(r, sr.copy()))
    np.testing.assert_allclose(np.vdot(da, ta).real, np.vdot(sq, dq).real + np.vdot(sr, dr).real,
                               rtol=tol)


@pytest.mark.parametrize("shape", [(3, 3), (3, 5)])
def test_qr_against_finite_differences(shape):
    a = crandn(*shape)
    k = min(shape)
    q, r = np.zeros((shape[0], k), complex), np.zeros((k, shape[1]), complex)
    report = check_gradient(qr_into, Duplicated(a, np.zeros_like(a)), Duplicated(q, np.zeros_like(q)),
                            Duplicated(r, np.zeros_like(r)), rng=5)
    assert report.passed, str(report)


@numba.njit
def svd_into(a, u, s, vh):
    uu, ss, vv = np.linalg.svd(a, full_matrices=False)
    u[:] = uu
    s[:] = ss
    vh[:] = vv


@numba.njit
def svd_weights(a, pu, s, pv, rec):
    """|U|^2, s, |V^H|^2 and U diag(sqrt(s)) V^H: invariant under the vectors' phases."""
    u, ss, vh = np.linalg.svd(a, full_matrices=False)
    pu[:] = np.abs(u) ** 2
    s[:] = ss
    pv[:] = np.abs(vh) ** 2
    rec[:] = (u * np.sqrt(ss)) @ vh


@pytest.mark.parametrize("dtype, tol", TOLS)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5)])
def test_svd_adjoint_pairs_with_tangent(shape, dtype, tol):
    """The adjoint is the transpose of the tangent (which fixes the phases: U^H U' has
    diagonal i Im(U^H A' V)_ii / s_i, V^H V' a zero one), for any seeds."""
    m, n = shape
    k = min(shape)
    a, ta = crandn(m, n, dtype=dtype), crandn(m, n, dtype=dtype)
    outs = [np.zeros((m, k), dtype), np.zeros(k, a.real.dtype), np.zeros((k, n), dtype)]
    seeds = [crandn(m, k, dtype=dtype), RNG.normal(size=k).astype(a.real.dtype),
             crandn(k, n, dtype=dtype)]
    tangents = [np.zeros_like(o) for o in outs]
    autodiff(svd_into, Duplicated(a.copy(), ta.copy()),
             *[Duplicated(o, t) for o, t in zip(outs, tangents)], mode=Forward)
    u, s, vh = np.linalg.svd(a.astype(complex), full_matrices=False)
    p = u.conj().T @ ta @ vh.conj().T
    np.testing.assert_allclose(tangents[1], p.diagonal().real, rtol=tol, atol=tol)
    np.testing.assert_allclose((u.conj().T @ tangents[0]).diagonal().imag, p.diagonal().imag / s,
                               rtol=10 * tol, atol=10 * tol)
    da = np.zeros_like(a)
    autodiff(svd_into, Duplicated(a.copy(), da), *[Duplicated(o, sd.copy()) for o, sd in zip(outs, seeds)])
    np.testing.assert_allclose(np.vdot(da, ta).real, sum(np.vdot(sd, t).real for sd, t in
                                                         zip(seeds, tangents)), rtol=10 * tol)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5)])
def test_svd_gauge_invariant_against_finite_differences(shape):
    m, n = shape
    k = min(shape)
    a = crandn(m, n)
    outs = [np.zeros((m, k)), np.zeros(k), np.zeros((k, n)), np.zeros((m, n), complex)]
    report = check_gradient(svd_weights, Duplicated(a, np.zeros_like(a)),
                            *[Duplicated(o, np.zeros_like(o)) for o in outs], rng=6)
    assert report.passed, str(report)
    ta, h = crandn(m, n), 1e-6
    tangents = [np.zeros_like(o) for o in outs]
    autodiff(svd_weights, Duplicated(a.copy(), ta.copy()),
             *[Duplicated(o, t) for o, t in zip(outs, tangents)], mode=Forward)
    plus, minus = [np.zeros_like(o) for o in outs], [np.zeros_like(o) for o in outs]
    svd_weights(a + h * ta, *plus)
    svd_weights(a - h * ta, *minus)
    for t, p, q in zip(tangents, plus, minus):
        np.testing.assert_allclose(t, (p - q) / (2 * h), rtol=1e-5, atol=1e-7)


@numba.njit
def lstsq_into(a, b, x, res, s):
    xx, rr, rank, ss = np.linalg.lstsq(a, b)
    x[:] = xx
    res[:] = rr
    s[:] = ss


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_lstsq_against_finite_differences(shape):
    """Full rank, tall (residuals) and wide (minimum norm); both modes."""
    m, n = shape
    a, b = crandn(m, n), crandn(m, 2)
    outs = [np.zeros((n, 2), complex), np.zeros(2 if m > n else 0), np.zeros(min(shape))]
    report = check_gradient(lstsq_into, Duplicated(a, np.zeros_like(a)), Duplicated(b, np.zeros_like(b)),
                            *[Duplicated(o, np.zeros_like(o)) for o in outs], rng=7)
    assert report.passed, str(report)
    ta, tb, h = crandn(m, n), crandn(m, 2), 1e-6
    tangents = [np.zeros_like(o) for o in outs]
    autodiff(lstsq_into, Duplicated(a.copy(), ta.copy()), Duplicated(b.copy(), tb.copy()),
             *[Duplicated(o, t) for o, t in zip(outs, tangents)], mode=Forward)
    plus, minus = [np.zeros_like(o) for o in outs], [np.zeros_like(o) for o in outs]
    lstsq_into(a + h * ta, b + h * tb, *plus)
    lstsq_into(a - h * ta, b - h * tb, *minus)
    for t, p, q in zip(tangents, plus, minus):
        np.testing.assert_allclose(t, (p - q) / (2 * h), rtol=1e-5, atol=1e-7)


@numba.njit
def eigvals_into(a, out):
    out[:] = np.linalg.eigvals(a)


@numba.njit
def eig_loss(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(v))


@pytest.mark.parametrize("dtype, tol", TOLS)
def test_eigvals_tangent_and_adjoint(dtype, tol):
    """w' = diag(V^{-1} A' V); the adjoint V^{-H} diag(wbar) V^H."""
    a, ta, s = crandn(4, 4, dtype=dtype), crandn(4, 4, dtype=dtype), crandn(4, dtype=dtype)
    out = np.zeros(4, dtype)
    w, v = np.linalg.eig(a.astype(complex))
    vi = np.linalg.inv(v)
    np.testing.assert_allclose(tangent(eigvals_into, a, ta, out), np.diag(vi @ ta @ v),
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(reverse(eigvals_into, a, out, s), vi.conj().T @ np.diag(s) @ v.conj().T,
                               rtol=tol, atol=tol)


def test_eigvals_against_finite_differences():
    a = crandn(4, 4)
    out = np.zeros(4, complex)
    report = check_gradient(eigvals_into, Duplicated(a, np.zeros_like(a)),
                            Duplicated(out, np.zeros_like(out)), rng=8)
    assert report.passed, str(report)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_complex_eig_vectors_refused_with_the_line(mode):
    from enzyme_py import UnsupportedError
    a = crandn(3, 3)
    kw = {} if mode == "reverse" else {"mode": Forward}
    with pytest.raises(UnsupportedError, match=r"np\.linalg\.eig of a complex matrix.*test_complex_lapack\.py:\d+"):
        autodiff(eig_loss, Duplicated(a, np.zeros_like(a)), **kw)


@numba.njit
def pinv_into(a, out):
    out[:] = np.linalg.pinv(a)


def test_pinv_against_finite_differences():
    """Numba's pinv multiplies with conjugate transposes (gemm 'c', 'c'), its scale factors in
    constant globals."""
    a, ta, h = crandn(4, 3), crandn(4, 3), 1e-7
    out = np.zeros((3, 4), complex)
    report = check_gradient(pinv_into, Duplicated(a, np.zeros_like(a)),
                            Duplicated(out, np.zeros_like(out)), rng=9)
    assert report.passed, str(report)
    t = tangent(pinv_into, a, ta, out)
    fd = (np.linalg.pinv(a + h * ta) - np.linalg.pinv(a - h * ta)) / (2 * h)
    np.testing.assert_allclose(t, fd, rtol=1e-5, atol=1e-7)
