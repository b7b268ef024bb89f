"""A Const array that meets a Duplicated one in a phi or select (`p = x if c else a`).

The loads through p are active; when p points into the Const array their adjoints go to a zeroed
stand-in shadow (ir_passes/transforms/common/stand_in.py) and are dropped. Before, these kernels raised
"a pointer mixes differentiable and constant memory" / "pointer ... has no shadow" (about 60 of
each 10,000 fuzz kernels).
"""
import numpy as np
import pytest
from numba import njit
from numba.core.runtime import _nrt_python, rtsys

from enzyme_py import Const, Duplicated, autodiff, compile_gradient
from ir_passes.analysis.activity import ConstantMemoryError


@njit
def pick(x, a, out, use_x):
    p = x if use_x else a
    out[0] = p[1] * p[1] + a[0] * p[2]


@njit
def walk(x, a, out, n):
    # p is a phi of the two arrays inside the loop
    s = 0.0
    p = a
    for k in range(n):
        s += p[k] * p[k]
        p = x if k % 2 == 0 else a
    out[0] = s


@njit
def store_through(x, a, out, use_x):
    p = x if use_x else a
    p[0] = a[1] * 3.0
    out[0] = x[0] + a[0]


def _grad(kernel, x, a, flag):
    da = np.zeros_like(a)
    dout = np.array([1.0])
    autodiff(kernel, Const(x.copy()), Duplicated(a.copy(), da), Duplicated(np.zeros(1), dout),
             Const(flag))
    return da


@pytest.mark.parametrize("use_x", [True, False])
def test_select_between_const_and_duplicated(use_x):
    x = np.array([0.3, 0.7, 1.1])
    a = np.array([0.5, -0.4, 0.9])
    da = _grad(pick, x, a, use_x)
    p = x if use_x else a
    want = np.zeros(3)
    want[0] += p[2]                 # a[0] * p[2]
    if not use_x:                   # p is a: d/da of a1^2 + a0 a2
        want[1] += 2 * a[1]
        want[2] += a[0]
    np.testing.assert_allclose(da, want, rtol=1e-12)


def test_phi_between_const_and_duplicated():
    x = np.array([0.3, 0.7, 1.1, 0.2, -0.5])
    a = np.array([0.5, -0.4, 0.9, 1.3, 0.8])
    n = 5
    da = _grad(walk, x, a, n)
    want = np.zeros(5)
    for k in range(n):              # p at step k was chosen at step k - 1: a when k - 1 is odd
        if k == 0 or (k - 1) % 2 == 1:
            want[k] += 2 * a[k]
    np.testing.assert_allclose(da, want, rtol=1e-12)
    # central finite differences along a random direction agree
    rng = np.random.default_rng(0)
    v = rng.standard_normal(5)
    h = 1e-6
    f = lambda aa: (walk(x, aa, out := np.zeros(1), n), out[0])[1]   # noqa: E731
    fd = (f(a + h * v) - f(a - h * v)) / (2 * h)
    assert abs(fd - da @ v) < 1e-7 * max(1.0, abs(fd))


def test_stand_in_is_freed():
    x = np.array([0.3, 0.7, 1.1])
    a = np.array([0.5, -0.4, 0.9])
    g = compile_gradient(pick, Const(x), Duplicated(a, np.zeros(3)),
                         Duplicated(np.zeros(1), np.ones(1)), Const(True))
    assert "stand_in" in g.generated or "enzpy.push_allocation" in g.generated

    entry = g.entry

    @njit
    def run(x, a, da, out, dout, reps):
        for _ in range(reps):
            entry(x, a, out, True, da, dout, 1.0)

    da, out, dout = np.zeros(3), np.zeros(1), np.ones(1)
    run(x, a, da, out, dout, 1)
    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        s0 = rtsys.get_allocation_stats()
        run(x, a, da, out, dout, 10)
        s1 = rtsys.get_allocation_stats()
    finally:
        if not was:
            _nrt_python.memsys_disable_stats()
    assert s1.alloc - s0.alloc == s1.free - s0.free >= 10


@pytest.mark.parametrize("use_x", [True, False])
def test_active_store_into_const_side_raises(use_x):
    # x[0] = 3 a[1] through p, then x[0] read directly: that read has no shadow, so the
    # derivative would be lost (silently 0 instead of 3): refused whichever branch runs
    x = np.array([0.3, 0.7, 1.1])
    a = np.array([0.5, -0.4, 0.9])
    with pytest.raises(ConstantMemoryError, match="argument 0 .`x`., which is Const"):
        _grad(store_through, x, a, use_x)


@njit
def pick_temporary(a, out, use_t):
    # a temporary holding constants, behind one variable with a Duplicated array: the
    # temporary gets a zeroed shadow of its own (fuzz seed 2028001547)
    t = np.zeros(3)
    t[1] = 0.25
    p = t if use_t else a
    out[0] = p[1] * a[2]


@pytest.mark.parametrize("use_t", [True, False])
def test_select_between_temporary_and_duplicated(use_t):
    a = np.array([0.5, -0.4, 0.9])
    da, dout = np.zeros(3), np.array([1.0])
    autodiff(pick_temporary, Duplicated(a.copy(), da), Duplicated(np.zeros(1), dout), Const(use_t))
    want = np.zeros(3)
    if use_t:
        want[2] = 0.25
    else:
        want[1], want[2] = a[2], a[1]
    np.testing.assert_allclose(da, want, rtol=1e-12)


@pytest.mark.parametrize("use_x", [True, False])
def test_forward_mode_select_between_const_and_duplicated(use_x):
    from enzyme_py import BatchDuplicated, Forward
    x = np.array([0.3, 0.7, 1.1])
    a = np.array([0.5, -0.4, 0.9])
    lanes = (np.array([1.0, 2.0, -1.0]), np.array([0.0, -0.5, 3.0]))
    touts = (np.zeros(1), np.zeros(1))
    autodiff(pick, Const(x.copy()), BatchDuplicated(a.copy(), tuple(t.copy() for t in lanes)),
             BatchDuplicated(np.zeros(1), touts), Const(use_x), mode=Forward)
    p = x if use_x else a
    for ta, tout in zip(lanes, touts):
        tp = np.zeros(3) if use_x else ta
        want = 2 * p[1] * tp[1] + ta[0] * p[2] + a[0] * tp[2]
        assert abs(tout[0] - want) < 1e-12


def test_forward_mode_active_store_into_const_side_raises():
    from enzyme_py import Forward
    x = np.array([0.3, 0.7, 1.1])
    a = np.array([0.5, -0.4, 0.9])
    with pytest.raises(ConstantMemoryError, match="constant memory"):
        autodiff(store_through, Const(x.copy()), Duplicated(a.copy(), np.ones(3)),
                 Duplicated(np.zeros(1), np.zeros(1)), Const(True), mode=Forward)
