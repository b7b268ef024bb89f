"""A checkpointed step that leaves the loop another way when it runs again in the reverse sweep
cannot give the gradient: the caller gets a RuntimeError that says so, and the process and the
gradient go on working (docs/checkpointing.md).

The kernel is a simulation with a watchdog, as long runs have: every step asks an external
clock (an inactive C callback, here a simulated one that advances per call) whether the wall
time is up, and raises TimeoutError if so. Recomputation asks the clock again, later: a run
that finished in the forward sweep can time out in the reverse sweep's recomputation. The
full tape runs no step twice and finishes."""
import ctypes

import numba
import numpy as np
import pytest
from numba import njit, prange
from numba.core.runtime import _nrt_python, rtsys

from enzyme_py import Active, Duplicated, check_gradient, register_derivative
from enzyme_py.modes.reverse import autodiff

clock = [0]


@ctypes.CFUNCTYPE(ctypes.c_int64)
def elapsed():
    """Simulated wall time: one tick per call."""
    clock[0] += 1
    return clock[0]


register_derivative(elapsed, inactive=True)


@njit
def watched_heat(u, alpha, steps, wall):
    n = u.shape[0]
    for s in range(steps):
        if elapsed() > wall:
            raise TimeoutError("out of wall time")
        for i in range(1, n - 1):
            u[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])


def run(memory, wall, start=0):
    clock[0] = start
    u, w = np.linspace(0.0, 1.0, 10) ** 2, np.linspace(1.0, 2.0, 10)
    du = w.copy()
    _, dalpha, _, _ = autodiff(watched_heat, Duplicated(u, du), Active(0.1), 12, wall,
                               memory=memory)
    return du, dalpha


def test_recomputation_that_times_out_raises():
    """With a wall time of exactly the forward's 12 ticks, the reverse sweep's runs of a step
    time out: under 1B (two snapshots, steps recomputed) and under 1MB too (a snapshot before
    every step, nothing recomputed; but a step's gradient runs the step's forward again). The
    error is a RuntimeError naming the cause; the same compiled gradient then works again,
    equal to the full tape's."""
    full = run("tape", wall=12)
    for memory in ("1B", "1MB"):
        with pytest.raises(RuntimeError, match="took another exit when it ran again in the reverse"):
            run(memory, wall=12)
    again = run("1B", wall=10**9)
    assert np.array_equal(again[0], full[0]) and again[1] == pytest.approx(full[1], rel=1e-12)


def test_enough_time_for_the_recomputation():
    """With wall time to spare the checkpointed gradient finishes and equals the full tape's."""
    full = run("tape", wall=12)
    for memory, wall in (("1MB", 10**9), ("1B", 10**9)):
        du, dalpha = run(memory, wall)
        assert np.array_equal(du, full[0]) and dalpha == pytest.approx(full[1], rel=1e-12)


def test_forward_timeout_is_the_kernels_error():
    """A run that times out in the forward sweep raises the kernel's own TimeoutError."""
    with pytest.raises(TimeoutError, match="out of wall time"):
        run("1B", wall=5)


@njit(parallel=True, boundscheck=True)
def tabulated_growth(u, rate, alpha, steps):
    """u <- u + alpha * rate[bin of u] * u in place, the rate looked up by the state's bin
    (a prange body that raises IndexError once an entry outgrows the table); returns |u|^2."""
    n = u.shape[0]
    m = rate.shape[0]
    for s in range(steps):
        for i in prange(n):
            u[i] = u[i] + alpha * rate[int(u[i] * m)] * u[i]
    e = 0.0
    for i in range(n):
        e += u[i] * u[i]
    return e


def growth_args(u0):
    return [Duplicated(u0.copy(), np.ones_like(u0)), np.linspace(0.5, 1.0, 10), Active(0.1), 4]


FITS = np.linspace(0.05, 0.55, 8)       # stays in the table for 4 steps
OUTGROWS = FITS.copy()
OUTGROWS[3] = 0.8                       # leaves the table at the third step


def nrt_balance():
    s = rtsys.get_allocation_stats()
    return s.alloc - s.free


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("memory", ["1B", "1MB", "auto"])
def test_prange_body_raises_in_the_forward(memory, nthreads):
    """A launch's body that raises in the forward sweep's plain run of a step: the caller gets
    the body's IndexError (the exception behind the plain call's SystemError, and the full
    tape's), the shadows are untouched (the reverse sweep does not run), nothing leaks, and the
    same gradient then works, equal to the full tape's."""
    before = numba.get_num_threads()
    numba.set_num_threads(min(nthreads, numba.config.NUMBA_NUM_THREADS))
    _nrt_python.memsys_enable_stats()
    try:
        with pytest.raises(SystemError) as plain:
            tabulated_growth(OUTGROWS.copy(), np.linspace(0.5, 1.0, 10), 0.1, 4)
        assert isinstance(plain.value.__cause__ or plain.value.__context__, IndexError)
        autodiff(tabulated_growth, *growth_args(FITS), memory=memory)     # compiled, pooled
        held = nrt_balance()
        for _ in range(3):
            args = growth_args(OUTGROWS)
            with pytest.raises(IndexError, match="index is out of bounds"):
                autodiff(tabulated_growth, *args, memory=memory)
            assert np.array_equal(args[0].shadow, np.ones(8))
        assert nrt_balance() == held
        a, b = growth_args(FITS), growth_args(FITS)
        ra = autodiff(tabulated_growth, *a, memory="tape")
        rb = autodiff(tabulated_growth, *b, memory=memory)
        assert np.array_equal(a[0].shadow, b[0].shadow) and np.array_equal(a[0].value, b[0].value)
        assert rb[2] == pytest.approx(ra[2], rel=1e-12) and abs(ra[2]) > 1.0
    finally:
        _nrt_python.memsys_disable_stats()
        numba.set_num_threads(before)


def test_prange_body_raising_gradient_against_differences():
    """The gradient of tabulated_growth where it stays in the table, under a budget, against
    central differences (the rate is constant near the point)."""
    report = check_gradient(tabulated_growth, *growth_args(FITS), memory="1B")
    assert report.passed, str(report)
