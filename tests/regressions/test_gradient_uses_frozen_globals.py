"""The gradient differentiates the code a plain call runs: the global, closure, module-attribute
and global-array values Numba froze when it compiled the kernel, not today's; after
`recompile()` (or a new overload) it follows the new code. Before, capture read today's values
(dx 9.0 where the derivative of the compiled k is 6.0) and cached gradients outlived
`recompile()`."""
import types

import numba
import numpy as np
import pytest

from numba.extending import register_jitable

from enzyme_py import Duplicated, Forward, autodiff

SCALE = 2.0
WEIGHTS = np.array([2.0, 5.0])
cfg = types.ModuleType("enzyme_py_test_cfg")
cfg.inner = types.ModuleType("enzyme_py_test_cfg.inner")
cfg.inner.K = 2.0


def _fd(kernel, x):
    """Central differences of a plain call (the code Numba runs)."""
    h, g = 1e-6, np.zeros_like(x)
    for i in range(x.size):
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (kernel(xp) - kernel(xm)) / (2 * h)
    return g


def _reverse(kernel, x):
    dx = np.zeros_like(x)
    autodiff(kernel, Duplicated(x, dx))
    return dx


def _forward(kernel, x):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = 1.0
        out = autodiff(kernel, Duplicated(x, e), mode=Forward)
        g[i] = out[0] if isinstance(out, tuple) else out
    return g


MODES = [_reverse, _forward]


def _make_global_kernel():
    @numba.njit
    def k(x):
        return SCALE * x[0] * x[0]
    return k


@pytest.mark.parametrize("mode", MODES)
def test_changed_global_then_recompile(mode):
    global SCALE
    SCALE = 2.0
    k = _make_global_kernel()
    x = np.array([1.5])
    k(x)
    try:
        SCALE = 3.0
        got = mode(k, x)
        np.testing.assert_allclose(got, [6.0])            # 2 * SCALE * x, SCALE frozen at 2
        np.testing.assert_allclose(got, _fd(k, x), rtol=1e-6)
        k.recompile()                                     # Numba's way to take the new value
        got = mode(k, x)
        np.testing.assert_allclose(got, [9.0])
        np.testing.assert_allclose(got, _fd(k, x), rtol=1e-6)
    finally:
        SCALE = 2.0


@pytest.mark.parametrize("mode", MODES)
def test_new_overload_after_change(mode):
    global SCALE
    SCALE = 2.0
    k = _make_global_kernel()
    x64 = np.array([1.5])
    k(x64)
    try:
        SCALE = 3.0
        x32 = np.array([1.5], dtype=np.float32)
        k(x32)                                            # compiled now: SCALE 3
        np.testing.assert_allclose(mode(k, x32), [9.0], rtol=1e-6)
        np.testing.assert_allclose(mode(k, x64), [6.0])
    finally:
        SCALE = 2.0


@pytest.mark.parametrize("mode", MODES)
def test_closure_value(mode):
    c = 2.0

    @numba.njit
    def k(x):
        return c * x[0] * x[0]

    x = np.array([1.5])
    k(x)
    c = 3.0         # noqa: F841 - read through k's closure cell
    np.testing.assert_allclose(mode(k, x), [6.0])
    np.testing.assert_allclose(mode(k, x), _fd(k, x), rtol=1e-6)
    k.recompile()
    np.testing.assert_allclose(mode(k, x), [9.0])


@numba.njit
def _attr_kernel(x):
    return cfg.inner.K * x[0] * x[0]


@pytest.mark.parametrize("mode", MODES)
def test_module_attribute_two_deep(mode):
    cfg.inner.K = 2.0
    k = numba.njit(_attr_kernel.py_func)
    x = np.array([1.5])
    k(x)
    try:
        cfg.inner.K = 3.0
        np.testing.assert_allclose(mode(k, x), [6.0])
        np.testing.assert_allclose(mode(k, x), _fd(k, x), rtol=1e-6)
    finally:
        cfg.inner.K = 2.0


@pytest.mark.parametrize("mode", MODES)
def test_global_array_mutated(mode):
    @numba.njit
    def k(x):
        return WEIGHTS[0] * x[0] * x[0]

    x = np.array([1.5])
    k(x)
    try:
        WEIGHTS[0] = 3.0
        np.testing.assert_allclose(mode(k, x), [6.0])
        np.testing.assert_allclose(mode(k, x), _fd(k, x), rtol=1e-6)
    finally:
        WEIGHTS[0] = 2.0


def _callee_uses_scale():
    @numba.njit
    def inner(v):
        return SCALE * v * v

    @numba.njit
    def outer(x):
        return inner(x[0])
    return inner, outer


def test_callee_compiled_before_import_style_copy():
    """A callee recompiled as a fresh copy (no recorded text) also gets its frozen values."""
    from enzyme_py.bridge.capture import forget_recorded_ir
    global SCALE
    SCALE = 2.0
    inner, outer = _callee_uses_scale()
    x = np.array([1.5])
    outer(x)
    for cres in inner.overloads.values():
        forget_recorded_ir(cres.library)
    try:
        SCALE = 3.0
        np.testing.assert_allclose(_reverse(outer, x), [6.0])
    finally:
        SCALE = 2.0


HELPER_C = 2.0


@register_jitable
def _helper(v):
    return HELPER_C * v * v


def test_changed_global_of_an_inlined_helper_is_refused():
    """Numba compiles a register_jitable helper once per signature and flags, freezing its
    globals then; the copy (other flags) would read today's. Refused, data untouched."""
    global HELPER_C

    @numba.njit
    def k(x):
        return _helper(x[0])

    x = np.array([1.5])
    k(x)
    np.testing.assert_allclose(_reverse(k, x), _fd(k, x), rtol=1e-6)
    try:
        HELPER_C = 3.0
        k2 = numba.njit(k.py_func)
        k2(x)                          # still runs HELPER_C = 2.0
        for mode in MODES:
            with pytest.raises(TypeError, match="_helper, which Numba compiled"):
                mode(k2, x)
        assert x[0] == 1.5
    finally:
        HELPER_C = 2.0
    np.testing.assert_allclose(_reverse(k2, x), _fd(k2, x), rtol=1e-6)


def test_kernel_compiled_before_import():
    """No record of what an overload compiled before enzyme_py was imported froze: its direct
    globals come from Numba's IR of that overload."""
    import os
    import subprocess
    import sys
    import textwrap
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = textwrap.dedent("""
        import numba, numpy as np
        S = 2.0
        @numba.njit
        def k(x):
            return S * x[0] * x[0]
        x = np.array([1.5]); k(x)
        S = 3.0
        from enzyme_py import autodiff, Duplicated
        dx = np.zeros(1); autodiff(k, Duplicated(x, dx)); print(dx[0])
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=root), timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert float(res.stdout.split()[-1]) == 6.0


def test_recompile_through_a_call_wrapper():
    """A call that fills a default goes through a generated wrapper (modes/calls.py) that links
    the kernel's code: recompiling the kernel drops its wrappers too."""
    global SCALE
    SCALE = 2.0

    @numba.njit
    def k(x, p=1.0):
        return SCALE * p * x[0] * x[0]

    x = np.array([1.5])
    k(x)
    np.testing.assert_allclose(_reverse(k, x), [6.0])
    try:
        SCALE = 3.0
        k.recompile()
        np.testing.assert_allclose(_reverse(k, x), [9.0])
        np.testing.assert_allclose(_forward(k, x), [9.0])
    finally:
        SCALE = 2.0


PLAIN_SCALE = 2.0


def _plain(x):
    return PLAIN_SCALE * x[0] * x[0]


@pytest.mark.parametrize("mode", MODES)
def test_plain_function_follows_today(mode):
    """A plain Python function runs with today's globals: its gradient follows them (enzyme_py
    jits it again when the values its compile froze have changed)."""
    global PLAIN_SCALE
    x = np.array([1.5])
    np.testing.assert_allclose(mode(_plain, x), [6.0])
    try:
        PLAIN_SCALE = 3.0
        np.testing.assert_allclose(mode(_plain, x), [9.0])
    finally:
        PLAIN_SCALE = 2.0
