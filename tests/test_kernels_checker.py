"""Tests of the finite-difference checker itself (enzyme_py.check), with `autodiff` replaced by
fakes that write known gradients, so they run without the AD. (test_kernels.test_kernel
does the same on every corpus case.)
"""
import numpy as np
import pytest
from numba import njit

import enzyme_py.api
from enzyme_py import Active, Const, Duplicated, DuplicatedNoNeed, check_gradient
from enzyme_py.arguments import clone
from enzyme_py.check import (GradientReport, default_rtol, default_step,
                             finite_difference)

# tests/ is on sys.path under pytest (rootdir conftest, no package)
from test_kernels_base import fake_autodiff as _fake_autodiff


# ---- focused checks -------------------------------------------------------------------------

@njit
def square_into(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i]


def _square_analytic(v, s, seed):
    return {0: s[0] + 2 * v[0] * s[1], 1: np.zeros_like(v[1])}


def _square_args():
    x = np.array([0.5, -1.0, 2.0])
    return Duplicated(x, np.array([0.1, 0.2, 0.3])), Duplicated(np.zeros(3), np.ones(3))


def test_report_contents(monkeypatch):
    monkeypatch.setattr(enzyme_py.api, "autodiff", _fake_autodiff(_square_analytic))
    rep = check_gradient(square_into, *_square_args())
    assert isinstance(rep, GradientReport) and rep.passed and bool(rep)
    assert [a.index for a in rep.args] == [0, 1]
    assert rep[0].kind == "Duplicated" and rep[0].max_abs_err < 1e-8 and rep[0].passed
    np.testing.assert_allclose(rep[0].fd, [0.1 + 1.0, 0.2 - 2.0, 0.3 + 4.0], rtol=1e-8)
    np.testing.assert_allclose(rep[1].fd, 0.0, atol=1e-12)
    text = str(rep)
    assert "square_into" in text and "PASSED" in text and "max abs err" in text
    with pytest.raises(KeyError):
        rep[5]


def test_report_on_failure_names_the_worst_elements(monkeypatch):
    monkeypatch.setattr(enzyme_py.api, "autodiff", _fake_autodiff(_square_analytic, perturb=0))
    rep = check_gradient(square_into, *_square_args())
    assert not rep.passed and not rep[0].passed and rep[1].passed
    assert rep[0].max_abs_err == pytest.approx(0.05 * 4.3, rel=1e-6)
    text = str(rep)
    assert "FAILED" in text and "NO" in text and "worst" in text


def test_unzeroed_overwritten_shadow_fails(monkeypatch):
    def not_zeroing(v, s, seed):
        return {0: s[0] + 2 * v[0] * s[1], 1: s[1]}  # forgot to consume dy
    monkeypatch.setattr(enzyme_py.api, "autodiff", _fake_autodiff(not_zeroing))
    rep = check_gradient(square_into, *_square_args())
    assert rep[0].passed and not rep[1].passed and not rep.passed


def test_primal_mismatch_fails(monkeypatch):
    monkeypatch.setattr(enzyme_py.api, "autodiff", _fake_autodiff(_square_analytic, skip_primal=True))
    rep = check_gradient(square_into, *_square_args())
    assert all(a.passed for a in rep.args)
    assert not rep.passed and rep.primal_mismatches and "argument 1" in rep.primal_mismatches[0]
    assert "primal" in str(rep)


def test_noneed_primal_not_checked(monkeypatch):
    monkeypatch.setattr(enzyme_py.api, "autodiff", _fake_autodiff(_square_analytic, skip_primal=True))
    x = np.array([0.5, -1.0, 2.0])
    rep = check_gradient(square_into, Duplicated(x, np.zeros(3)), DuplicatedNoNeed(np.zeros(3), np.ones(3)))
    assert rep.passed, str(rep)
    assert rep[1].kind == "DuplicatedNoNeed"


def test_caller_arrays_unchanged(monkeypatch):
    monkeypatch.setattr(enzyme_py.api, "autodiff", _fake_autodiff(_square_analytic))
    dx, dy = _square_args()
    copies = [np.copy(a) for a in (dx.value, dx.shadow, dy.value, dy.shadow)]
    rep = check_gradient(square_into, dx, dy)
    assert rep.passed
    for a, c in zip((dx.value, dx.shadow, dy.value, dy.shadow), copies):
        np.testing.assert_array_equal(a, c)
    # the fake really ran on other arrays
    (ad_x, ad_y), = enzyme_py.api.autodiff.calls
    assert ad_x.value is not dx.value and ad_y.shadow is not dy.shadow


@njit
def weighted_cube(a, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += a * x[i] ** 3
    return s


def test_active_and_seed(monkeypatch):
    x = np.array([0.5, -1.0, 2.0])

    def analytic(v, s, seed):
        return {0: seed * float(np.sum(v[1] ** 3)), 1: s[1] + seed * 3 * v[0] * v[1] ** 2}
    monkeypatch.setattr(enzyme_py.api, "autodiff", _fake_autodiff(analytic))
    rep = check_gradient(weighted_cube, Active(1.5), Duplicated(x, np.zeros(3)), seed=2.5)
    assert rep.passed, str(rep)
    assert rep[0].kind == "Active" and rep[0].fd == pytest.approx(2.5 * 7.125, rel=1e-8)
    # the seed scales the checked objective: a gradient for seed 1 is rejected at seed 2.5
    monkeypatch.setattr(enzyme_py.api, "autodiff",
                        _fake_autodiff(lambda v, s, seed: analytic(v, s, 1.0)))
    assert not check_gradient(weighted_cube, Active(1.5), Duplicated(x, np.zeros(3)), seed=2.5).passed


def test_autodiff_without_active_result_is_reported(monkeypatch):
    monkeypatch.setattr(enzyme_py.api, "autodiff", lambda k, *a, **kw: (None, None))
    with pytest.raises(TypeError, match="Active"):
        check_gradient(weighted_cube, Active(1.5), Duplicated(np.ones(2), np.zeros(2)))


def test_rng_draws_the_seeds(monkeypatch):
    monkeypatch.setattr(enzyme_py.api, "autodiff", _fake_autodiff(_square_analytic))
    dx, dy = _square_args()
    fd1 = finite_difference(square_into, dx, dy, rng=7)
    fd2 = finite_difference(square_into, dx, dy, rng=7)
    fd0 = finite_difference(square_into, dx, dy)
    np.testing.assert_array_equal(fd1[0], fd2[0])
    assert not np.allclose(fd1[0], fd0[0])
    np.testing.assert_array_equal(dy.shadow, np.ones(3))  # caller's seeds untouched
    assert check_gradient(square_into, dx, dy, rng=7).passed


def test_float32_step_and_tolerance():
    assert default_step(np.float32) > 100 * default_step(np.float64)
    assert default_rtol(np.float64) == 1e-6
    assert default_rtol(np.float32) >= 1e-3
    assert default_rtol(np.float64, rtol=1e-3) == 1e-3
    assert 1e-6 < default_rtol(np.float32, fd_dtype=np.float64) < default_rtol(np.float32)


def test_float32_finite_difference_accuracy():
    x = np.array([0.3, -0.7, 1.1], dtype=np.float32)
    y = np.zeros(3, np.float32)
    dy = np.array([1.0, 0.5, -2.0], dtype=np.float32)
    exact = 2 * x.astype(np.float64) * dy
    fd32 = finite_difference(square_into, Duplicated(x, np.zeros(3, np.float32)), Duplicated(y, dy))
    fd64 = finite_difference(square_into, Duplicated(x, np.zeros(3, np.float32)), Duplicated(y, dy),
                             fd_dtype=np.float64)
    np.testing.assert_allclose(fd32[0], exact, rtol=1e-3)
    np.testing.assert_allclose(fd64[0], exact, rtol=1e-8)


@njit
def strided_sum_sq(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def test_copies_keep_layout_so_no_new_specialisation(monkeypatch):
    base = np.arange(10.0)
    x = base[::-2]
    dx = np.zeros(10)[::-2]
    strided_sum_sq(x)
    sigs = list(strided_sum_sq.signatures)
    monkeypatch.setattr(enzyme_py.api, "autodiff",
                        _fake_autodiff(lambda v, s, seed: {0: s[0] + 2 * seed * v[0]}))
    assert check_gradient(strided_sum_sq, Duplicated(x, dx)).passed
    assert list(strided_sum_sq.signatures) == sigs
    for a in (base[::-2], np.asfortranarray(np.ones((3, 2))), np.ones((4, 6))[1::2, ::3]):
        c = clone(a)
        assert c.strides == a.strides and c.shape == a.shape and np.array_equal(a, c)
        assert not np.shares_memory(a, c)
    ro = np.ones(3)
    ro.flags.writeable = False
    assert not clone(ro).flags.writeable


def test_aliased_arguments_keep_sharing_memory():
    # y = x[1:4] overlaps x = buf[:3]: y[i] = x[i]**2 writes buf[1..3] in order, so buf[1] and
    # buf[2] are read after being written. L = sum over buf of seed * final value, each location
    # once: seeds 1, 2, 3, 4 on buf[0..3].
    buf = np.array([0.5, -1.0, 2.0, 3.0])
    seeds = np.array([1.0, 2.0, 3.0, 4.0])
    fd = finite_difference(square_into, Duplicated(buf[:3], seeds[:3]), Duplicated(buf[1:4], seeds[1:]))

    def L(b):
        b = b.copy()
        square_into(b[:3], b[1:4])
        return float(seeds @ b)
    exact = [(L(buf + h * e) - L(buf - h * e)) / (2 * h) for e, h in zip(np.eye(4), [1e-6] * 4)]
    np.testing.assert_allclose(fd[0], exact[:3], rtol=1e-6)
    np.testing.assert_allclose(fd[1], exact[1:], rtol=1e-6)


@njit
def returns_array(x):
    return x * 2.0


def test_array_return_is_seeded():
    w = np.array([3.0, -1.0])
    fd = finite_difference(returns_array, Duplicated(np.ones(2), np.zeros(2)), seed=w)
    np.testing.assert_allclose(fd[0], 2.0 * w, rtol=1e-8)
    with pytest.raises(ValueError, match="shape"):
        finite_difference(returns_array, Duplicated(np.ones(2), np.zeros(2)), seed=np.ones(3))
    drawn = finite_difference(returns_array, Duplicated(np.ones(2), np.zeros(2)), rng=3)
    assert np.all(drawn[0] != 0.0)     # a seed drawn from rng in the returned shape


def test_const_and_bare_arguments_are_not_differentiated():
    @njit
    def k(x, c, n, y):
        for i in range(n):
            y[i] = c[i] * x[i]
    fd = finite_difference(k, Duplicated(np.ones(3), np.zeros(3)), Const(np.array([1.0, 2.0, 3.0])), 3,
                           Duplicated(np.zeros(3), np.ones(3)))
    assert fd[1] is None and fd[2] is None
    np.testing.assert_allclose(fd[0], [1.0, 2.0, 3.0], rtol=1e-8)
