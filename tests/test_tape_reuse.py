"""Tape reuse between calls, seen through NRT's allocation statistics.

The tape of a gradient comes from NRT_Allocate / NRT_Free (enzyme_py/bridge/nrt.py) and is parked
between calls (ir_passes/transforms/reverse/tape/tape.py): the first call allocates it, a repeat call with
the same shapes allocates nothing, a bigger call grows it, and `release_tape` frees it. The
gradients are called from an @njit driver so that no argument unboxing enters the counts.
"""
import math

import numpy as np
import pytest
from numba import njit
from numba.core.runtime import _nrt_python, rtsys

from enzyme_py import Const, Duplicated, compile_gradient
from enzyme_py.workspace import release_tape


@pytest.fixture(autouse=True)
def nrt_stats():
    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    yield
    if not was:
        _nrt_python.memsys_disable_stats()


def counts():
    s = rtsys.get_allocation_stats()
    return s.alloc, s.free


def delta(f, *args):
    a0, f0 = counts()
    f(*args)
    a1, f1 = counts()
    return a1 - a0, f1 - f0


def calls(run, *args):
    """NRT (allocations, frees) of run(*args) (whose last argument is reps) beyond unboxing."""
    a0, f0 = delta(run, *args[:-1], 0)
    a, f = delta(run, *args)
    return a - a0, f - f0


@njit
def sweep(x, steps):
    # each step overwrites x: the reverse sweep needs every state (a tape of overwritten values)
    for s in range(steps):
        for i in range(x.shape[0]):
            x[i] = math.sin(x[i])


@njit
def sweep_raise(x, steps, limit):
    for s in range(steps):
        for i in range(x.shape[0]):
            x[i] = math.sin(x[i])
        if s == limit:
            raise ValueError("limit reached")


@njit
def sweep_temp(x, steps, limit):
    # a temporary with a shadow (scratch memory of the gradient), then a raise
    t = np.empty_like(x)
    for s in range(steps):
        for i in range(x.shape[0]):
            t[i] = math.sin(x[i])
        for i in range(x.shape[0]):
            x[i] = t[i]
        if s == limit:
            raise ValueError("limit reached")


def driver(entry):
    """@njit run(x, steps, dx, reps): `reps` gradient calls."""
    @njit
    def run(x, steps, dx, reps):
        for _ in range(reps):
            entry(x, steps, dx, 1.0)
    return run


def expected(x0, steps):
    d, x = np.ones_like(x0), x0.copy()
    for _ in range(steps):
        d *= np.cos(x)
        x = np.sin(x)
    return d


def test_repeat_call_allocates_nothing_and_bigger_call_grows():
    x0 = np.linspace(0.1, 1.0, 1000)
    x, dx = x0.copy(), np.zeros_like(x0)
    g = compile_gradient(sweep, Duplicated(x, dx), Const(5))
    release_tape(g)
    run = driver(g.entry.unchecked)       # the gradient alone: no strong-zero copies
    run(x, 5, dx, 0)                                   # compiles the driver
    start = counts()
    first = calls(run, x, 5, dx, 1)
    assert first[0] > 0 and first[0] > first[1]        # the tape was allocated and is kept
    parked = first[0] - first[1]
    np.copyto(x, x0)
    dx[:] = 1.0
    assert calls(run, x, 5, dx, 1) == (0, 0)
    np.testing.assert_allclose(dx, expected(x0, 5), rtol=1e-12)
    assert calls(run, x, 5, dx, 10) == (0, 0)          # ten more calls, same shapes
    assert calls(run, x, 3, dx, 3) == (0, 0)           # fewer steps fit the tape
    big, dbig = np.linspace(0.1, 1.0, 4000), np.zeros(4000)
    grown = calls(run, big, 5, dbig, 1)
    assert grown[0] > 0 and grown[0] == grown[1]       # grown: old arrays freed, count kept
    assert calls(run, big, 5, dbig, 2) == (0, 0)
    assert calls(run, x, 5, dx, 2) == (0, 0)           # smaller again: the big tape serves
    assert release_tape(g)
    end = counts()
    assert end[0] - end[1] == start[0] - start[1]      # nothing leaked
    assert parked > 0


def test_error_path_does_not_leak():
    # raising calls go through the entry from Python: Numba itself does not release the
    # arguments an @njit caller unboxed when its callee raises
    x0 = np.linspace(0.1, 1.0, 500)
    x, dx = x0.copy(), np.zeros_like(x0)
    g = compile_gradient(sweep_raise, Duplicated(x, dx), Const(4), Const(-1))
    release_tape(g)
    start = counts()
    with pytest.raises(ValueError):
        g.entry(x, 4, 2, dx, 1.0)                      # raises in the third step, cold tape
    g.entry(x, 4, -1, dx, 1.0)                         # a full call: the whole tape is there
    base = delta(g.entry, x, 4, -1, dx, 1.0)           # unboxing x and dx only
    assert base[0] == base[1]
    for limit in (0, 1, 3):
        assert delta(_raising, g.entry, x, limit, dx) == base    # warm: nothing allocated
    assert release_tape(g)
    end = counts()
    assert end[0] - end[1] == start[0] - start[1]


def _raising(entry, x, limit, dx):
    with pytest.raises(ValueError):
        entry(x, 4, limit, dx, 1.0)


def test_shadow_of_temporary_is_freed_on_error():
    x0 = np.linspace(0.1, 1.0, 300)
    x, dx = x0.copy(), np.zeros_like(x0)
    g = compile_gradient(sweep_temp, Duplicated(x, dx), Const(4), Const(-1))
    g.entry(x, 4, -1, dx, 1.0)
    start = counts()
    for limit in (-1, 1, 0, -1):
        if limit < 0:
            g.entry(x, 4, limit, dx, 1.0)
        else:
            with pytest.raises(ValueError):
                g.entry(x, 4, limit, dx, 1.0)
    end = counts()
    assert end[0] - end[1] == start[0] - start[1]
    assert end[0] - start[0] >= 4 * 4                  # unboxing, the temporary and its shadow
    release_tape(g)
