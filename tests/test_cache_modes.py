"""The three cache modes give the same gradient: "auto" (the default) tapes expensive values
(sqrt, divisions, math calls) in loops, "minimal" recomputes them, "always" tapes everything.
Checked on an N-body-like kernel (sqrt and 1/r^3 per pair, carried sums) against finite
differences, and the tapes compared."""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, autodiff, check_gradient, explain


@njit
def forces(px, m, f):
    n = px.shape[0]
    for i in range(n):
        a = 0.0
        for j in range(n):
            if j != i:
                d = px[j] - px[i]
                r2 = d * d + 0.01
                a += m[j] * d / (r2 * np.sqrt(r2)) + np.exp(-r2)
        f[i] = m[i] * a


def _args(seed=0, n=12):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, n), rng.uniform(0.5, 1.5, n), rng.standard_normal(n)


def test_auto_matches_finite_differences():
    px, m, w = _args()
    rep = check_gradient(forces, Duplicated(px, np.zeros_like(px)), Duplicated(m, np.zeros_like(m)),
                         Duplicated(np.zeros_like(px), w))
    assert rep.passed, str(rep)


@pytest.mark.parametrize("cache", ["minimal", "always"])
def test_modes_agree(cache):
    px, m, w = _args(1)
    out = {}
    for mode in ("auto", cache):
        dpx, dm = np.zeros_like(px), np.zeros_like(m)
        autodiff(forces, Duplicated(px, dpx), Duplicated(m, dm), Duplicated(np.zeros_like(px), w.copy()),
                 cache=mode)
        out[mode] = np.concatenate([dpx, dm])
    np.testing.assert_allclose(out[cache], out["auto"], rtol=1e-12, atol=1e-14)


def test_auto_tapes_between_minimal_and_always():
    px, m, w = _args(2)
    args = (Duplicated(px, np.zeros_like(px)), Duplicated(m, np.zeros_like(m)),
            Duplicated(np.zeros_like(px), w))
    tape = {c: explain(forces, *args, cache=c).tape_bytes for c in ("minimal", "auto", "always")}
    assert tape["minimal"] < tape["auto"] < tape["always"]
