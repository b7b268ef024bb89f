"""Segmented time loops (memory="auto" when the full tape does not fit the budget): the outlined
step runs k iterations (checkpoint/outline.py), its own gradient tapes the segment, and the
schedule snapshots once per segment (checkpoint/version.py). The gradient equals the full
tape's (array shadows and primals bit for bit, Active scalars to rounding) and finite
differences, for k = 1, k not dividing the steps, k >= the steps, no steps, early exits and
errors; every generated function passes LLVM's verifier."""
import llvmlite.binding as llvm
import numpy as np
import pytest
from numba import njit

from enzyme_py import Active, Duplicated, check_gradient, explain
from enzyme_py.api import inspect
from enzyme_py.modes.reverse import autodiff
from ir_passes import Memory

from test_checkpointing import alloc_args, heat, heat_alloc, heat_args, relax, relax_args, \
    rk4, rk4_args, same_as_tape

STATE = 40 * 8 + 32       # heat on 40 points: the array and the carry (flag, s, k, trips)


def segments(k, state=STATE, budget=None, auto=False):
    """A cache whose quarter holds k states, and a budget whose half does (by default, with
    room for 3 snapshots beside the final state): segments of k steps."""
    budget = budget or (2 * k + 5) * state
    return Memory(budget, auto=auto, cache=4 * k * state)


@njit
def heat_break(u, alpha, steps, cap):
    """Leaves the time loop early, by a second exit, once u[1] passes `cap`."""
    n = u.shape[0]
    for s in range(steps):
        for i in range(1, n - 1):
            u[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1]) + 0.01
        if u[1] > cap:
            break


def verified(kernel, args, memory) -> str:
    g = inspect(kernel, *args, memory=memory)
    assert g.error is None, g.error
    llvm.parse_assembly(g.generated).verify()
    return g.generated


@pytest.mark.parametrize("k, steps, auto", [
    (1, 30, False), (3, 30, False), (7, 30, False), (7, 30, True), (30, 30, False),
    (100, 30, False), (4, 0, False), (4, 1, False), (4, 1, True)])
def test_heat_segments_equal_the_tape(k, steps, auto):
    """With auto, 30 steps overflow the budget (the full tape's 30 states against 19), one
    step does not (the full tape is kept)."""
    memory = segments(k, auto=auto)
    assert ".ckpt." in verified(heat, heat_args(steps=steps)(), memory)
    same_as_tape(heat_args(steps=steps), heat, memory)
    (c,) = explain(heat, *heat_args(steps=steps)(), memory=memory).checkpointed
    if steps > 1:
        assert not c.full_tape and c.segment == (k if k >= 2 else 1)
        assert c.steps == -(-steps // c.segment)     # the last leaves by its latch
        assert c.held <= memory.budget
    elif steps and auto:
        assert c.full_tape


def test_segments_recompute_less_than_single_steps():
    """Within the same budget (15 states), segments of 5 steps recompute fewer iterations
    than steps of one (Revolve over 6 segments in 9 slots against 30 steps in 13)."""
    budget = 15 * STATE
    (one,) = explain(heat, *heat_args(steps=30)(),
                     memory=Memory(budget, cache=4 * STATE)).checkpointed
    (five,) = explain(heat, *heat_args(steps=30)(), memory=segments(5, budget=budget)).checkpointed
    assert five.segment == 5 and one.segment == 1
    assert five.recomputed * 5 < one.recomputed
    assert "of 5 iterations each" in str(five)


@pytest.mark.parametrize("kernel, make, state", [
    (rk4, rk4_args(), 5 * 8 * 6 + 32), (heat_alloc, alloc_args(), 12 * 8 + 40),
    (relax, relax_args(), 12 * 8 + 40)])
def test_other_loops_in_segments(kernel, make, state):
    """RK4 (scratch arrays, calls), an allocating step (an error exit) and a while loop."""
    memory = segments(3, state=state)
    verified(kernel, make(), memory)
    same_as_tape(make, kernel, memory)
    (c,) = explain(kernel, *make(), memory=memory).checkpointed
    assert c.segment >= 2


@pytest.mark.parametrize("cap", [0.5, 100.0])
def test_early_exit_in_a_segment(cap):
    """The loop leaves by its break in the middle of a segment (cap 0.5) or runs out (100)."""
    rng = np.random.default_rng(9)
    u0, w = rng.standard_normal(20), rng.standard_normal(20)

    def make():
        return [Duplicated(u0.copy(), w.copy()), Active(0.2), 25, cap]
    memory = segments(4, state=20 * 8 + 32)
    verified(heat_break, make(), memory)
    same_as_tape(make, heat_break, memory)
    report = check_gradient(heat_break, *make(), memory=memory)
    assert report.passed, str(report)


@pytest.mark.parametrize("k", [1, 7])
def test_heat_segments_finite_differences(k):
    report = check_gradient(heat, *heat_args(steps=30)(), memory=segments(k))
    assert report.passed, str(report)


def test_against_central_differences():
    """L = <w, u_final> is linear in u: the shadow against central differences along a
    direction, and dL/dalpha."""
    u0, w = np.random.default_rng(1).standard_normal(40), np.random.default_rng(2).standard_normal(40)
    du = w.copy()
    _, da, _ = autodiff(heat, Duplicated(u0.copy(), du), Active(0.3), 23, memory=segments(5))

    def loss(u, a):
        u = u.copy()
        heat(u, a, 23)
        return float(w @ u)
    v = np.random.default_rng(3).standard_normal(40)
    h = 1e-4
    assert du @ v == pytest.approx((loss(u0 + h * v, 0.3) - loss(u0 - h * v, 0.3)) / (2 * h), rel=1e-7)
    h = 1e-6
    assert da == pytest.approx((loss(u0, 0.3 + h) - loss(u0, 0.3 - h)) / (2 * h), rel=1e-6)


def test_hessian_vector_product_over_segments():
    """Forward mode over a segmented gradient (test_checkpointing_hvp.py's cubic heat, 20
    steps in segments of 3): the product equals the full tape's."""
    from test_checkpointing_hvp import cubic_heat, point

    from enzyme_py.helpers import hessian_vector_product
    x, v = point()
    memory = segments(3, state=12 * 8 + 32)
    full = hessian_vector_product(cubic_heat, x, v, 0.3, 20)
    seg = hessian_vector_product(cubic_heat, x, v, 0.3, 20, memory=memory)
    assert np.array_equal(seg, full) and np.abs(seg).max() > 1e-6
    (c,) = explain(cubic_heat, Duplicated(x.copy(), np.zeros_like(x)), 0.3, 20,
                   memory=memory).checkpointed
    assert c.segment == 3 and c.steps == 7


def test_last_level_cache_from_sysfs(tmp_path, monkeypatch):
    """The highest level of data or unified cache, its size in K or M; instruction caches do
    not count."""
    from enzyme_py.modes import memory
    for k, (level, kind, size) in enumerate([(1, "Data", "48K"), (1, "Instruction", "32K"),
                                             (2, "Unified", "1024K"), (3, "Unified", "32M")]):
        d = tmp_path / f"index{k}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    monkeypatch.setattr(memory, "CACHES", str(tmp_path))
    assert memory._sysfs_cache() == 32 << 20
    monkeypatch.setattr(memory, "CACHES", str(tmp_path / "none"))
    assert memory._sysfs_cache() == 0
    assert memory.cache_size() > 0


def test_prange_in_a_segmented_loop():
    """A time loop around parallel loops (the step returns the launches' status) in segments
    of 4 steps: the gradient equals the tape's and finite differences."""
    from test_checkpointing import heat_prange, prange_args
    (one,) = explain(heat_prange, *prange_args()(), memory="1MB").checkpointed
    memory = segments(4, state=one.snapshot_bytes)
    (c,) = explain(heat_prange, *prange_args()(), memory=memory).checkpointed
    assert c.segment == 4 and c.steps == 3
    same_as_tape(prange_args(), heat_prange, memory)
    report = check_gradient(heat_prange, *prange_args()(), memory=memory)
    assert report.passed, str(report)


def test_recomputation_that_leaves_another_way_in_a_segment():
    """test_checkpointing_errors.py's watchdog: a segment run again in the reverse sweep times
    out (the error names the cause); with time to spare the gradient is the tape's."""
    from test_checkpointing_errors import run
    memory = Memory(10**6, cache=4 * 3 * (10 * 8 + 32))
    full = run("tape", wall=12)
    with pytest.raises(RuntimeError, match="took another exit when it ran again in the reverse"):
        run(memory, wall=12)
    du, dalpha = run(memory, wall=10**9)
    assert np.array_equal(du, full[0]) and dalpha == pytest.approx(full[1], rel=1e-12)
