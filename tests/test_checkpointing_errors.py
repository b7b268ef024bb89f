"""A checkpointed step that leaves the loop another way when it runs again in the reverse sweep
cannot give the gradient: the caller gets a RuntimeError that says so, and the process and the
gradient go on working (docs/checkpointing.md).

The kernel is a simulation with a watchdog, as long runs have: every step asks an external
clock (an inactive C callback, here a simulated one that advances per call) whether the wall
time is up, and raises TimeoutError if so. Recomputation asks the clock again, later: a run
that finished in the forward sweep can time out in the reverse sweep's recomputation. The
full tape runs no step twice and finishes."""
import ctypes

import numpy as np
import pytest
from numba import njit

from enzyme_py import Active, Duplicated, register_derivative
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
