"""Every build of one kernel and signature starts from one capture and one cleanup
(enzyme_py/bridge/memo.py): reverse, forward and cache="always" share them, a recompiled kernel
and clear_cache() capture again, and the gradients built from the shared capture are right
(checked against the analytic derivative)."""
import numpy as np
from numba import njit, types

from enzyme_py import Active, Duplicated, Forward, autodiff, clear_cache, compile_gradient, inspect
from enzyme_py.bridge import memo

SIG = (types.float64[::1], types.float64)


@njit
def energy(x, a):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.sin(a * x[i]) * x[i]
    return s


def _analytic(x, a):
    """d/dx_i and d/da of sum_i sin(a x_i) x_i."""
    return np.sin(a * x) + a * x * np.cos(a * x), float(np.sum(x * x * np.cos(a * x)))


def test_reverse_forward_and_cache_always_share_one_capture():
    x, a = np.linspace(0.1, 1.0, 7), 0.7
    energy(x, a)
    rev = compile_gradient(energy, Duplicated(x, np.zeros_like(x)), Active(a))
    fwd = inspect(energy, Duplicated(x, np.ones_like(x)), Active(a, 0.0), mode=Forward)
    always = compile_gradient(energy, Duplicated(x, np.zeros_like(x)), Active(a), cache="always")
    assert fwd.captured is rev.captured and always.captured is rev.captured
    assert fwd.cleaned is rev.cleaned and always.cleaned is rev.cleaned
    assert memo.captured(energy, SIG).text is rev.captured

    gx, ga = _analytic(x, a)
    for cache in ("auto", "always"):
        dx = np.zeros_like(x)
        _, da = autodiff(energy, Duplicated(x, dx), Active(a), cache=cache)
        np.testing.assert_allclose(dx, gx, rtol=1e-12)
        np.testing.assert_allclose(da, ga, rtol=1e-12)
    u = np.random.default_rng(0).standard_normal(x.size)
    tangent = autodiff(energy, Duplicated(x, u), Active(a, 0.5), mode=Forward)
    np.testing.assert_allclose(tangent, gx @ u + 0.5 * ga, rtol=1e-12)


def test_a_recompiled_kernel_and_clear_cache_capture_again():
    x = np.linspace(0.1, 1.0, 5)
    energy(x, 0.3)
    first = memo.captured(energy, SIG)
    assert memo.captured(energy, SIG) is first
    energy.recompile()          # a new compiled overload: the kept capture is stale
    second = memo.captured(energy, SIG)
    assert second is not first
    clear_cache()
    third = memo.captured(energy, SIG)
    assert third is not second
    assert memo.cleaned_text(third) is memo.cleaned_text(third)
