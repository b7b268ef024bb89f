"""np.empty temporaries kept alive until the reverse sweep (ir_passes/transforms/reverse/tape/retain.py).

A temporary filled once and then only read used to be taped at every read ("read from local
memory that is gone in the reverse sweep": the kernel frees it before returning). The gradient
now holds one more reference to it until its reverse sweep ends, and reads it again there.
"""
import math

import numpy as np
import pytest
from numba import njit
from numba.core.runtime import _nrt_python, rtsys

from enzyme_py import Const, Duplicated, autodiff, compile_gradient, explain


@njit
def scaled_sums(x, w, out):
    # e = exp(w) once, then read n * m times: needs no tape when e outlives the forward sweep
    m = w.shape[0]
    e = np.empty(m)
    for j in range(m):
        e[j] = math.exp(w[j])
    for i in range(x.shape[0]):
        s = 0.0
        for j in range(m):
            s += e[j] * x[i] * x[i]
        out[i] = s


@njit
def scaled_sums_raise(x, w, out, limit):
    m = w.shape[0]
    e = np.empty(m)
    for j in range(m):
        e[j] = math.exp(w[j])
    for i in range(x.shape[0]):
        if i == limit:
            raise ValueError("limit")
        out[i] = e[i % m] * x[i]


def annotated(x, w):
    return (Duplicated(x.copy(), np.zeros_like(x)), Duplicated(w.copy(), np.zeros_like(w)),
            Duplicated(np.zeros_like(x), np.ones_like(x)))


def test_temporary_is_read_again_not_taped():
    x, w = np.linspace(0.1, 1.0, 50), np.linspace(-0.5, 0.5, 7)
    e = explain(scaled_sums, *annotated(x, w))
    assert not any("gone in the reverse sweep" in c.reason for c in e.cached), str(e)
    assert e.tape_bytes < 8 * x.size * w.size     # nothing per (i, j)


def test_gradient_values():
    x, w = np.linspace(0.1, 1.0, 6), np.linspace(-0.5, 0.5, 3)
    a = annotated(x, w)
    autodiff(scaled_sums, *a)
    S = np.exp(w).sum()
    np.testing.assert_allclose(a[0].shadow, 2 * x * S, rtol=1e-12)
    np.testing.assert_allclose(a[1].shadow, np.exp(w) * (x * x).sum(), rtol=1e-12)


def test_reference_released_on_success_and_on_error():
    # entries called from Python (Numba does not release what an @njit caller unboxed when its
    # callee raises); alloc - free must come back to where it started
    x, w = np.linspace(0.1, 1.0, 6), np.linspace(-0.5, 0.5, 3)
    ok = compile_gradient(scaled_sums, *annotated(x, w)).entry
    a = annotated(x, w)
    bad = compile_gradient(scaled_sums_raise, a[0], a[1], a[2], Const(3)).entry
    bufs = [x.copy(), w.copy(), np.zeros(6), np.zeros(6), np.zeros(3), np.ones(6)]
    ok(*bufs[:3], *bufs[3:], 1.0)
    with pytest.raises(ValueError):
        bad(*bufs[:3], 3, *bufs[3:], 1.0)
    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        s0 = rtsys.get_allocation_stats()
        for _ in range(5):
            ok(*bufs[:3], *bufs[3:], 1.0)
        s1 = rtsys.get_allocation_stats()
        for _ in range(5):
            with pytest.raises(ValueError):
                bad(*bufs[:3], 3, *bufs[3:], 1.0)
        s2 = rtsys.get_allocation_stats()
    finally:
        if not was:
            _nrt_python.memsys_disable_stats()
    assert s1.alloc - s0.alloc == s1.free - s0.free >= 5       # the temporary, freed each call
    assert s2.alloc - s1.alloc == s2.free - s1.free >= 5       # also when the kernel raises
