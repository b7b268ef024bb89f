"""`h = h0.copy()` of a float array parameter whose copy is read only by BLAS (W @ h) and never
loaded or stored by the kernel itself: reverse mode refused the copy ("memory copy of data whose
float type is unknown"), though the parameter's dtype says what the memory holds. The caller now
declares each array parameter's float type to the type analysis (Extent.element)."""
import numpy as np
from numba import njit

from enzyme_py import Duplicated, autodiff, check_gradient


@njit
def rnn_states(W, U, xs, h0, hs):
    h = h0.copy()
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
        hs[t, :] = h


def _args(dtype=np.float64):
    rng = np.random.default_rng(3)
    n, m, T = 4, 2, 5
    return [(0.5 * rng.standard_normal(s)).astype(dtype)
            for s in ((n, n), (n, m), (T, m), (n,))] + [np.zeros((T, n), dtype)]


def test_gradient_against_finite_differences():
    args = _args()
    ann = [Duplicated(a.copy(), np.zeros_like(a)) for a in args[:4]]
    report = check_gradient(rnn_states, *ann, Duplicated(args[4].copy(), np.zeros_like(args[4])))
    assert report, report


def test_h0_gradient_of_one_step():
    """One step: hs[0] = tanh(W h0 + U x0); d sum(hs) / d h0 = W^T (1 - hs[0]^2)."""
    W, U, xs, h0, hs = _args()
    xs = xs[:1].copy()
    hs = hs[:1].copy()
    dh0 = np.zeros_like(h0)
    autodiff(rnn_states, Duplicated(W, np.zeros_like(W)), Duplicated(U, np.zeros_like(U)),
             Duplicated(xs, np.zeros_like(xs)), Duplicated(h0, dh0),
             Duplicated(hs, np.ones_like(hs)))
    out = np.tanh(W @ h0 + U @ xs[0])
    np.testing.assert_allclose(hs[0], out, rtol=1e-14)
    np.testing.assert_allclose(dh0, W.T @ (1.0 - out ** 2), rtol=1e-12)


def test_float32():
    args = _args(np.float32)
    dh0 = np.zeros_like(args[3])
    ann = [Duplicated(a, np.zeros_like(a)) for a in args[:3]]
    autodiff(rnn_states, *ann, Duplicated(args[3], dh0), Duplicated(args[4], np.ones_like(args[4])))
    assert np.all(np.isfinite(dh0)) and np.any(dh0 != 0)
