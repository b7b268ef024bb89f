"""Checkpointed time loops around `prange` loops: each step launches parallel loops; the launch's
blocks, schedule and thread state are the step's own, the snapshot the arrays the step writes.
Under a budget the gradient equals the full tape's (array shadows and primals bit for bit,
Active scalars to rounding) and finite differences, with 1 and 2 threads."""
import math

import numba
import numpy as np
import pytest
from numba import njit, prange

from enzyme_py import Active, Duplicated, check_gradient, explain
from enzyme_py.api import inspect
from enzyme_py.modes.reverse import autodiff


@njit(parallel=True)
def diffuse(u, flux, kappa, dt, steps):
    """Explicit diffusion, u updated in place: the fluxes between neighbours, then the update."""
    n = u.shape[0]
    for s in range(steps):
        for i in prange(n - 1):
            flux[i] = kappa * (u[i + 1] - u[i])
        for i in prange(1, n - 1):
            u[i] += dt * (flux[i] - flux[i - 1])


@njit(parallel=True)
def diffuse_normalised(u, tmp, kappa, steps):
    """Diffusion whose state is rescaled to its first step's mass each step: a parallel
    reduction (per-thread partial sums) inside the time loop."""
    n = u.shape[0]
    for s in range(steps):
        mass = 0.0
        for i in prange(n):
            mass += u[i] * u[i]
        for i in prange(1, n - 1):
            tmp[i] = u[i] + kappa * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in prange(1, n - 1):
            u[i] = tmp[i] / (1.0 + 0.01 * mass)


@njit(parallel=True)
def damp(u, alpha, steps):
    """A pointwise relaxation in place: the state is u alone, so a step's gradient may run on
    its snapshot's memory (checkpoint/state.py's view)."""
    n = u.shape[0]
    for s in range(steps):
        for i in prange(n):
            u[i] = u[i] - alpha * math.sin(u[i])


def damp_args(n=40, steps=13):
    rng = np.random.default_rng(13)
    u0, w = rng.standard_normal(n), rng.standard_normal(n)
    return lambda: [Duplicated(u0.copy(), w.copy()), Active(0.25), steps]


def diffuse_args(n=33, steps=15):
    rng = np.random.default_rng(11)
    u0, w = rng.standard_normal(n), rng.standard_normal(n)
    return lambda: [Duplicated(u0.copy(), w.copy()), Duplicated(np.zeros(n), np.zeros(n)),
                    Active(0.3), 0.5, steps]


def normalised_args(n=29, steps=11):
    rng = np.random.default_rng(12)
    u0, w = rng.standard_normal(n), rng.standard_normal(n)
    return lambda: [Duplicated(u0.copy(), w.copy()), Duplicated(np.zeros(n), np.zeros(n)),
                    Active(0.2), steps]


CASES = {"diffuse": (diffuse, diffuse_args), "normalised": (diffuse_normalised, normalised_args),
         "damp": (damp, damp_args)}


@pytest.fixture
def threads():
    before = numba.get_num_threads()
    yield lambda k: numba.set_num_threads(min(k, numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(before)


def same_as_tape(kernel, make, memory):
    a, b = make(), make()
    ra = autodiff(kernel, *a, memory="tape")
    rb = autodiff(kernel, *b, memory=memory)
    for x, y in zip(a, b):
        if isinstance(x, Duplicated):
            assert np.array_equal(x.value, y.value)
            assert np.array_equal(x.shadow, y.shadow)
    for x, y in zip(ra, rb):
        if x is not None:
            assert y == pytest.approx(x, rel=1e-12, abs=1e-12)
    return rb


# Every kernel under the smallest budget (the fewest snapshots, the most recomputation; "1B"
# schedules as "1KB" does); one snapshot before every step ("1MB") and `auto` on diffuse alone:
# the budget only sets the schedule, which the recomputing case exercises in full.
BUDGETS = [(name, "1KB") for name in sorted(CASES)] + [("diffuse", "1MB"), ("diffuse", "auto")]


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("name,memory", BUDGETS)
def test_prange_time_loop_equals_full_tape(threads, nthreads, memory, name):
    threads(nthreads)
    kernel, make = CASES[name]
    g = inspect(kernel, *make()(), memory=memory)
    assert g.error is None, g.error
    assert ".ckpt." in g.generated
    same_as_tape(kernel, make(), memory)


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("name", sorted(CASES))
def test_prange_time_loop_finite_differences(threads, nthreads, name):
    threads(nthreads)
    kernel, make = CASES[name]
    report = check_gradient(kernel, *make()(), memory="1KB")
    assert report.passed, str(report)


def test_explain_reports_the_prange_time_loop(threads):
    """1MB holds a snapshot before every step (nothing recomputed); 1KB holds two (the
    fewest), and the steps between them are recomputed. The snapshot is the two arrays the
    step writes (u and the fluxes) and the carry; the launches' blocks are the step's own."""
    threads(2)
    every = explain(diffuse, *diffuse_args()(), memory="1MB")
    (c,) = every.checkpointed
    assert c.steps == 15 and c.snapshots == 15 and c.recomputed == 0
    carry = c.snapshot_bytes - 2 * 33 * 8    # flag, counter, step count, values the exits use
    assert 24 <= carry <= 80 and carry % 8 == 0
    assert "checkpointed loops: 1" in str(every) and "test_checkpointing_parallel.py:" in c.source
    (tiny,) = explain(diffuse, *diffuse_args()(), memory="1KB").checkpointed
    assert tiny.snapshots == 2 and tiny.recomputed > 0


def test_in_place_step_gradient_with_a_launch():
    """damp's state is one array: a step's gradient runs on the snapshot's memory in place,
    its launch reading the snapshot's pointer from the step's own argument block."""
    g = inspect(damp, *damp_args()(), memory="1B")
    assert g.error is None, g.error
    assert ".ckpt.0.view" in g.generated
