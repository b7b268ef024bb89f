"""Row colouring with batched reverse sweeps (SparseJacobian by_rows): a residual whose last
entry sums every unknown (a dense row) takes n column colours but 4 row colours; mode None
chooses the rows, and the matrix equals the dense Jacobian, for returned and written outputs."""
import numpy as np
from numba import njit

from enzyme_py import SparseJacobian, jacobian


@njit
def with_total(x):
    """A 3-point residual plus a mass constraint: the last row depends on every x."""
    n = x.size
    r = np.empty(n + 1)
    for i in range(n):
        left = x[i - 1] if i > 0 else 0.0
        right = x[i + 1] if i < n - 1 else 0.0
        r[i] = left - 2.0 * x[i] + right + 0.1 * np.sin(x[i])
    s = 0.0
    for i in range(n):
        s += x[i] * x[i]
    r[n] = s - 1.0
    return r


@njit
def with_total_out(x, out, w):
    n = x.size
    for i in range(n):
        right = x[i + 1] if i < n - 1 else 0.0
        out[i] = w * x[i] * right
    out[n] = np.sum(np.exp(x))


def test_dense_row_takes_rows():
    rng = np.random.default_rng(4)
    x = rng.random(40)
    J = SparseJacobian(with_total)
    S = J(x)
    assert J.by_rows and J.ncolours == 4
    D = jacobian(with_total, x)
    np.testing.assert_allclose(S.toarray(), D, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(S[40].toarray().ravel(), 2 * x, rtol=1e-14)   # analytic row
    F = SparseJacobian(with_total, mode="forward")
    np.testing.assert_allclose(F(x).toarray(), D, rtol=1e-13, atol=1e-15)
    assert not F.by_rows and F.ncolours == 40
    x2 = rng.random(40)
    np.testing.assert_allclose(J(x2).toarray(), jacobian(with_total, x2), rtol=1e-13,
                               atol=1e-15)
    assert J.detections == 1


def test_rows_with_a_written_output():
    rng = np.random.default_rng(6)
    x, out = rng.random(30), np.zeros(31)
    J = SparseJacobian(with_total_out, mode="reverse")
    S = J(x, 0.7, out=out)
    assert J.by_rows and J.ncolours <= 4
    np.testing.assert_allclose(S.toarray(), jacobian(with_total_out, x, 0.7, out=np.zeros(31)),
                               rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(S[30].toarray().ravel(), np.exp(x), rtol=1e-14)
    assert np.all(out == 0.0)          # the caller's out is left as it was
