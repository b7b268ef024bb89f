"""Capture differentiates exactly the specialization Numba compiled.

A helper compiled before enzyme_py was imported, or loaded from Numba's `cache=True` disk
cache, is recompiled as a private copy: with its declared signature, `locals=` and flags, or
refused (CaptureMismatch). A kernel with explicit signatures is differentiated for the declared
overload Numba dispatches to. Every gradient is checked against finite differences or an
analytic value.
"""
import json
import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from numba import float32, types

from enzyme_py import Active, Duplicated, autodiff
from enzyme_py.bridge.capture import _RECORD_ATTR, CaptureMismatch, capture

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(script: str, cwd, env=None) -> dict:
    """Run `script` in a fresh Python; return the JSON it prints last."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **(env or {}))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=cwd, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


HELPERS = '''
import numba
import numpy as np
from numba import float32

@numba.njit("f4(f4, f4)", cache=True)
def scaled(x, s):
    return x * s * 2.0

@numba.njit(cache=True, locals={"acc": float32})
def damped(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc * 0.5 + x[i] * x[i]
    return acc

@numba.njit(cache=True, fastmath=True, error_model="numpy")
def ratio(a, b):
    return a / b

@numba.njit
def kernel(x, y):
    s = np.float32(0.0)
    for i in range(x.shape[0]):
        s += scaled(x[i], np.float32(1.5)) * ratio(x[i], np.float32(3.0))
    return s + damped(y)
'''

DRIVER = '''
import json, sys
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else ".")
import numpy as np
import cached_helpers as m
import enzyme_py
from enzyme_py import autodiff, Duplicated, check_gradient
x = np.array([0.5, -1.25, 2.0], np.float32); y = np.array([1.0, 0.25, -0.5], np.float32)
dx, dy = np.zeros_like(x), np.zeros_like(y)
autodiff(m.kernel, Duplicated(x, dx), Duplicated(y, dy))
report = check_gradient(m.kernel, Duplicated(x, np.zeros_like(x)), Duplicated(y, np.zeros_like(y)))
hits = sum(sum(d.stats.cache_hits.values()) for d in (m.scaled, m.damped, m.ratio))
print(json.dumps({"dx": dx.tolist(), "dy": dy.tolist(), "passed": bool(report.passed),
                  "hits": hits}))
'''


def test_cache_true_helpers_second_process_reads_numba_cache(tmp_path):
    (tmp_path / "cached_helpers.py").write_text(HELPERS)
    first = _run(DRIVER, tmp_path)
    second = _run(DRIVER, tmp_path)
    assert first["hits"] == 0 and second["hits"] >= 3       # the second run loaded them
    x = np.array([0.5, -1.25, 2.0], np.float32)
    y = np.array([1.0, 0.25, -0.5], np.float32)
    # d/dx of 3x * x/3 = x^2 summed: 2x; damped: acc_k = 0.5 acc_{k-1} + y_k^2
    np.testing.assert_allclose(first["dx"], 2 * x, rtol=1e-5)
    np.testing.assert_allclose(first["dy"], [0.25 * 2 * y[0], 0.5 * 2 * y[1], 2 * y[2]],
                               rtol=1e-5)
    assert second["dx"] == first["dx"] and second["dy"] == first["dy"]
    assert first["passed"] and second["passed"]


def _forget_recorded_text(dispatcher):
    """Make the helper look compiled before enzyme_py was imported."""
    for cres in dispatcher.overloads.values():
        cres.library.__dict__.pop(_RECORD_ATTR, None)


def _helper(**options):
    @numba.njit(**options)
    def helper(v, i):
        acc = 0.0
        for j in range(i + 1):
            acc += v[j] * v[j]
        return acc / (1.0 + v[i])
    return helper


@pytest.mark.parametrize("options", [
    {"fastmath": True}, {"error_model": "numpy"}, {"boundscheck": True},
    {"inline": "always"}, {"nogil": True}, {"locals": {"acc": float32}},
    {"fastmath": {"reassoc", "nsz"}, "error_model": "numpy"},
], ids=lambda o: ",".join(o))
def test_unrecorded_helper_flags_reproduced(options):
    helper = _helper(**options)

    @numba.njit
    def kernel(x, y):
        for i in range(x.shape[0]):
            y[i] = helper(x, i)

    x = np.linspace(0.2, 1.0, 5)
    kernel(x, np.zeros(5))
    _forget_recorded_text(helper)
    dx, y, y_plain = np.zeros(5), np.zeros(5), np.zeros(5)
    autodiff(kernel, Duplicated(x, dx), Duplicated(y, np.ones(5)))
    kernel(x, y_plain)
    assert np.array_equal(y, y_plain)           # the gradient's primal is the compiled one
    acc = np.cumsum(x * x)
    expected = np.array([np.sum(2 * x[j] / (1 + x[j:])) for j in range(5)]) - acc / (1 + x) ** 2
    if "locals" in options:     # a float32 accumulator: the copy kept it
        assert not np.allclose(y_plain, acc / (1 + x), rtol=1e-12, atol=0)
        np.testing.assert_allclose(dx, expected, rtol=1e-6)
    else:
        np.testing.assert_allclose(dx, expected, rtol=1e-12)


def test_copy_that_differs_from_the_compiled_helper_is_refused():
    helper = _helper()

    @numba.njit
    def kernel(x, y):
        y[0] = helper(x, 1)

    x = np.linspace(0.2, 1.0, 3)
    kernel(x, np.zeros(3))
    _forget_recorded_text(helper)
    helper.targetoptions["fastmath"] = True     # the options no longer say how it was compiled
    with pytest.raises(CaptureMismatch, match="cannot reproduce the compiled .*helper.*fastmath"):
        autodiff(kernel, Duplicated(x, np.zeros(3)), Duplicated(np.zeros(3), np.ones(3)))


def test_kernel_with_explicit_signature_uses_the_declared_overload():
    @numba.njit("f4(f4[:], f4)")
    def energy(x, a):
        s = np.float32(0.0)
        for i in range(x.shape[0]):
            s += a * x[i] * x[i]
        return s

    x = np.array([1.0, 2.0, -0.5], np.float32)
    cap = capture(energy, (types.float32[::1], types.float64))
    assert cap.argtypes == (types.float32[:], types.float32) and cap.restype == types.float32
    dx = np.zeros_like(x)
    (_, da) = autodiff(energy, Duplicated(x, dx), Active(1.5))
    np.testing.assert_allclose(dx, 2 * 1.5 * x, rtol=1e-6)
    assert da == pytest.approx(float(np.sum(x.astype(np.float64) ** 2)), rel=1e-6)
    with pytest.raises(TypeError, match="declared signatures"):
        autodiff(energy, Duplicated(np.zeros(2), np.zeros(2)), Active(1.0))


@numba.extending.register_jitable
def _softplus(z):
    return np.log1p(np.exp(z))


def _cube_impl(x):
    return x * x * x


def cube(x):
    return x ** 3


@numba.extending.overload(cube)
def _cube_overload(x):
    if isinstance(x, types.Float):
        return _cube_impl


@numba.vectorize(["float64(float64)"])
def _bump(z):
    return z * np.exp(-z * z)


def test_register_jitable_overload_and_vectorize_helpers():
    @numba.njit
    def kernel(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += _softplus(x[i]) + cube(x[i]) + _bump(x[i])
        return s

    x = np.linspace(-1.0, 1.5, 6)
    dx = np.zeros_like(x)
    autodiff(kernel, Duplicated(x, dx))
    sig = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(dx, sig + 3 * x ** 2 + np.exp(-x * x) * (1 - 2 * x * x),
                               rtol=1e-12)
