"""The fast path of repeated reverse-mode calls (enzyme_py/modes/fast.py): after a call has
succeeded, later calls of the same structure skip the full path. Every case is run three ways:
the first (full-path) call, the fast path's checks in Python, and the compiled runner (its
threshold lowered), and must give the gradient of the full path; calls the fast path must not
take (overlapping memory, mismatched shadows, other types) must still get the full path's
result or error."""
import numpy as np
import pytest
from numba import njit

import enzyme_py
from enzyme_py import Active, Const, Duplicated, DuplicatedNoNeed, autodiff
from enzyme_py.modes import fast
from enzyme_py.modes.returns import UNSET


@njit
def weighted_dot(x, y, w, scale):
    s = 0.0
    for i in range(x.size):
        s += scale * w[i] * x[i] * y[i]
    return s


@njit
def axpy_into(y, x, a):
    for i in range(x.size):
        y[i] = y[i] + a * x[i] * x[i]


@njit
def checked_sum(x, limit):
    s = 0.0
    for i in range(x.size):
        if x[i] > limit:
            raise ValueError("x exceeds the limit")
        s += x[i] * x[i]
    return s


@pytest.fixture
def quick_runner(monkeypatch):
    monkeypatch.setattr(fast, "RUNNER_CALLS", 3)
    enzyme_py.clear_cache()
    yield
    enzyme_py.clear_cache()


def _dot_case(rng, n=7):
    x, y, w = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)
    return x, y, w


def test_each_stage_gives_the_analytic_gradient(quick_runner):
    rng = np.random.default_rng(1)
    x, y, w = _dot_case(rng)
    stages = []
    for call in range(6):          # full path, Python checks x3 (runner built at the 3rd), runner
        dx, dy = np.zeros_like(x), np.zeros_like(y)
        res = autodiff(weighted_dot, Duplicated(x, dx), Duplicated(y, dy), Const(w), Active(1.5),
                       seed=2.0)
        assert res[0] is None and res[1] is None and res[2] is None
        np.testing.assert_allclose(res[3], 2.0 * np.sum(w * x * y), rtol=1e-13)
        np.testing.assert_allclose(dx, 2.0 * 1.5 * w * y, rtol=1e-13)
        np.testing.assert_allclose(dy, 2.0 * 1.5 * w * x, rtol=1e-13)
        tables = getattr(weighted_dot, fast.TABLE)
        stages.append(bool(tables.runners))
    assert stages == [False, False, False, True, True, True]


def test_fast_call_is_taken_and_accumulates(quick_runner):
    x = np.linspace(0.1, 1.0, 5)
    y = np.ones(5)
    dy = np.ones(5)
    dx = np.zeros(5)
    args = (Duplicated(y, dy), Duplicated(x, dx), Active(0.5))
    assert fast.call(axpy_into, args, UNSET, "auto") is None     # nothing remembered yet
    for k in range(1, 6):
        y0 = y.copy()
        res = autodiff(axpy_into, *args)
        np.testing.assert_allclose(y, y0 + 0.5 * x * x)          # primal as a plain call
        np.testing.assert_allclose(dx, k * 2 * 0.5 * x)          # shadows accumulate
        np.testing.assert_allclose(res[2], np.sum(x * x))
    assert fast.call(axpy_into, args, UNSET, "auto") is not None


@pytest.mark.parametrize("stage_calls", [1, 4])
def test_aliased_shadow_still_refused(quick_runner, stage_calls):
    x, y, w = _dot_case(np.random.default_rng(2))
    for _ in range(stage_calls):
        autodiff(weighted_dot, Duplicated(x, np.zeros_like(x)), Duplicated(y, np.zeros_like(y)),
                 Const(w), Active(1.0))
    with pytest.raises(ValueError, match="shares memory"):
        autodiff(weighted_dot, Duplicated(x, y), Duplicated(y, np.zeros_like(y)), Const(w),
                 Active(1.0))
    with pytest.raises(ValueError, match="shape"):
        autodiff(weighted_dot, Duplicated(x, np.zeros(x.size + 1)),
                 Duplicated(y, np.zeros_like(y)), Const(w), Active(1.0))
    shadow = np.zeros_like(x)
    shadow.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        autodiff(weighted_dot, Duplicated(x, shadow), Duplicated(y, np.zeros_like(y)),
                 Const(w), Active(1.0))


@pytest.mark.parametrize("stage_calls", [1, 4])
def test_same_array_twice_and_views(quick_runner, stage_calls):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((2, 6))
    w = rng.standard_normal(6)
    for _ in range(stage_calls):
        autodiff(weighted_dot, Duplicated(X[0], np.zeros(6)), Duplicated(X[1], np.zeros(6)),
                 Const(w), Active(1.0))
    # disjoint rows of one array
    dX = np.zeros_like(X)
    autodiff(weighted_dot, Duplicated(X[0], dX[0]), Duplicated(X[1], dX[1]), Const(w),
             Active(1.0))
    np.testing.assert_allclose(dX[0], w * X[1], rtol=1e-13)
    np.testing.assert_allclose(dX[1], w * X[0], rtol=1e-13)
    # the same array twice, one shadow: d/dx sum w x^2 = 2 w x
    x = X[0].copy()
    dx = np.zeros_like(x)
    autodiff(weighted_dot, Duplicated(x, dx), Duplicated(x, dx), Const(w), Active(1.0))
    np.testing.assert_allclose(dx, 2 * w * x, rtol=1e-13)


@pytest.mark.parametrize("stage_calls", [1, 4])
def test_other_types_take_their_own_gradient(quick_runner, stage_calls):
    x, y, w = _dot_case(np.random.default_rng(4))
    for _ in range(stage_calls):
        autodiff(weighted_dot, Duplicated(x, np.zeros_like(x)), Duplicated(y, np.zeros_like(y)),
                 Const(w), Active(1.0))
    x32, y32, w32 = (a.astype(np.float32) for a in (x, y, w))
    dx32 = np.zeros_like(x32)
    res = autodiff(weighted_dot, Duplicated(x32, dx32), Duplicated(y32, np.zeros_like(y32)),
                   Const(w32), Active(1.0))
    np.testing.assert_allclose(dx32, w32 * y32, rtol=1e-5)
    np.testing.assert_allclose(res[3], np.sum(w * x * y), rtol=1e-5)
    # a strided view (layout A) and a Fortran-ordered case of the same structure
    big = np.random.default_rng(5).standard_normal(14)
    dbig = np.zeros_like(big)
    autodiff(weighted_dot, Duplicated(big[::2], dbig[::2]), Duplicated(y, np.zeros_like(y)),
             Const(w), Active(1.0))
    np.testing.assert_allclose(dbig[::2], w * y, rtol=1e-13)
    assert not dbig[1::2].any()


def test_unaligned_view_is_left_to_the_full_path(quick_runner):
    x, y, w = _dot_case(np.random.default_rng(6))
    for _ in range(2):
        autodiff(weighted_dot, Duplicated(x, np.zeros_like(x)), Duplicated(y, np.zeros_like(y)),
                 Const(w), Active(1.0))
    buf = np.zeros(x.size * 8 + 1, dtype=np.uint8)
    xu = np.ndarray(x.shape, dtype=np.float64, buffer=buf, offset=1)
    xu[:] = x
    assert not xu.flags.aligned
    args = (Duplicated(xu, np.zeros_like(x)), Duplicated(y, np.zeros_like(y)), Const(w),
            Active(1.0))
    assert fast.split(args, "auto") is None
    autodiff(weighted_dot, *args)
    np.testing.assert_allclose(args[0].shadow, w * y, rtol=1e-13)


@pytest.mark.parametrize("stage_calls", [1, 4])
def test_kernel_exception_passes_through(quick_runner, stage_calls):
    x = np.array([0.5, 1.0, 1.5])
    for _ in range(stage_calls):
        autodiff(checked_sum, Duplicated(x, np.zeros(3)), 10.0)
    dx = np.zeros(3)
    with pytest.raises(ValueError, match="exceeds the limit"):
        autodiff(checked_sum, Duplicated(x, dx), 1.2)
    res = autodiff(checked_sum, Duplicated(x, dx), 10.0, seed=None)
    assert res == (None, None)
    assert not dx.any()                       # seed None: the return is out of L


def test_noneed_and_seed_values(quick_runner):
    x = np.linspace(0.2, 1.2, 4)
    for k in range(5):
        y = np.zeros(4)
        dy = np.ones(4)
        dx = np.zeros(4)
        autodiff(axpy_into, DuplicatedNoNeed(y, dy), Duplicated(x, dx), Active(3.0))
        np.testing.assert_allclose(dx, 2 * 3.0 * x)
    # a non-float seed is left to the full path, which converts it
    res = autodiff(weighted_dot, Duplicated(x, np.zeros(4)), Duplicated(x.copy(), np.zeros(4)),
                   Const(np.ones(4)), Active(1.0), seed=2)
    np.testing.assert_allclose(res[3], 2 * np.sum(x * x))


def test_clear_cache_forgets(quick_runner):
    x, y, w = _dot_case(np.random.default_rng(7))
    args = (Duplicated(x, np.zeros_like(x)), Duplicated(y, np.zeros_like(y)), Const(w),
            Active(1.0))
    autodiff(weighted_dot, *args)
    assert fast.call(weighted_dot, args, UNSET, "auto") is not None
    enzyme_py.clear_cache()
    assert fast.call(weighted_dot, args, UNSET, "auto") is None
