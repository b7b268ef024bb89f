"""Checkpointed time loops (ir_passes/transforms/reverse/loops/checkpoint/): the gradient under a
memory budget equals the full tape's (array shadows and final primals bit for bit, Active
scalars to rounding: each step sums its own share first) and finite differences."""
import math

import numpy as np
import pytest
from numba import njit, prange

from enzyme_py import Active, BatchDuplicated, Duplicated, Forward, check_gradient, explain
from enzyme_py import autodiff as autodiff_api
from enzyme_py.api import compile_gradient, inspect
from enzyme_py.explain import checkpointed_loops
from enzyme_py.modes.memory import auto_budget
from enzyme_py.modes.reverse import autodiff
from ir_passes import Memory


@njit
def heat(u, alpha, steps):
    n = u.shape[0]
    r = alpha * 0.5
    for s in range(steps):
        left = u[0]
        for i in range(1, n - 1):
            ui = u[i]
            u[i] = ui + r * (left - 2.0 * ui + u[i + 1])
            left = ui


@njit
def rnn(W, U, xs, h, tmp):
    T, H, D = xs.shape[0], h.shape[0], xs.shape[1]
    for t in range(T):
        for i in range(H):
            s = 0.0
            for j in range(H):
                s += W[i, j] * h[j]
            for j in range(D):
                s += U[i, j] * xs[t, j]
            tmp[i] = math.tanh(s)
        for i in range(H):
            h[i] = tmp[i]


@njit
def rhs(y, k, a):
    n = y.shape[0]
    for i in range(n):
        k[i] = -a * y[i] + math.sin(y[(i + 1) % n])


@njit
def rk4(y, a, dt, steps, k1, k2, k3, k4, tmp):
    n = y.shape[0]
    for s in range(steps):
        rhs(y, k1, a)
        for i in range(n):
            tmp[i] = y[i] + 0.5 * dt * k1[i]
        rhs(tmp, k2, a)
        for i in range(n):
            tmp[i] = y[i] + 0.5 * dt * k2[i]
        rhs(tmp, k3, a)
        for i in range(n):
            tmp[i] = y[i] + dt * k3[i]
        rhs(tmp, k4, a)
        for i in range(n):
            y[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


@njit
def relax(u, f, omega, tol):
    """Over-relaxation until the largest change is below tol: a while loop."""
    n = u.shape[0]
    it = 0
    while True:
        change = 0.0
        for i in range(1, n - 1):
            new = (1.0 - omega) * u[i] + omega * 0.5 * (u[i - 1] + u[i + 1] + f[i])
            change = max(change, abs(new - u[i]))
            u[i] = new
        it += 1
        if change < tol or it >= 500:
            break


@njit
def laplacian(u):
    n = u.shape[0]
    out = np.zeros(n)
    for i in range(1, n - 1):
        out[i] = u[i - 1] - 2.0 * u[i] + u[i + 1]
    return out


@njit
def heat_alloc(u, alpha, steps):
    """A helper allocates a new array every step (its allocation can fail: a second exit)."""
    n = u.shape[0]
    for s in range(steps):
        lap = laplacian(u)
        for i in range(n):
            u[i] += alpha * lap[i]


@njit
def heat_scratch(u, alpha, steps):
    """The scratch array is allocated before the loop: its size comes from the allocation."""
    n = u.shape[0]
    tmp = np.empty(n)
    for s in range(steps):
        for i in range(1, n - 1):
            tmp[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = tmp[i]


@njit
def overwritten_after(u, c, steps):
    """Code after the loop overwrites `c`, which every step reads."""
    for s in range(steps):
        for i in range(u.shape[0]):
            u[i] = u[i] * c[i] + 0.1 * u[i] * u[i]
    for i in range(c.shape[0]):
        c[i] = 0.0


@njit
def carried_float(x, a, steps):
    """A float carried from step to step and returned after the loop."""
    s = 0.0
    for t in range(steps):
        for i in range(x.shape[0]):
            x[i] = x[i] * a + s
        s = x[0]
    return s


@njit(parallel=True)
def heat_prange(u, tmp, alpha, steps):
    """A prange inside the time loop (docs/parallel.md)."""
    n = u.shape[0]
    for s in range(steps):
        for i in prange(1, n - 1):
            tmp[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in prange(1, n - 1):
            u[i] = tmp[i]


def checkpointed(kernel, args, memory) -> bool:
    g = inspect(kernel, *args, memory=memory)
    assert g.error is None, g.error
    return ".ckpt." in g.generated


def fresh(make):
    """Arguments from `make()` (a list of annotations over new arrays), twice."""
    return make(), make()


def same_as_tape(make, kernel, memory):
    """autodiff under `memory` and with the full tape, on equal fresh arguments: the array
    shadows and primals bit for bit, Active derivatives to rounding."""
    a, b = fresh(make)
    ra = autodiff(kernel, *a, memory="tape")
    rb = autodiff(kernel, *b, memory=memory)
    for x, y in zip(a, b):
        if isinstance(x, Duplicated):
            assert np.array_equal(x.value, y.value)
            assert np.array_equal(x.shadow, y.shadow)
    for x, y in zip(ra, rb):
        if x is not None:
            assert y == pytest.approx(x, rel=1e-12, abs=1e-12)


def heat_args(n=40, steps=30):
    rng = np.random.default_rng(1)
    u0, w = rng.standard_normal(n), rng.standard_normal(n)
    return lambda: [Duplicated(u0.copy(), w.copy()), Active(0.7), steps]


def rnn_args(T=25, H=6, D=3):
    rng = np.random.default_rng(2)
    W, U = 0.4 * rng.standard_normal((H, H)), 0.4 * rng.standard_normal((H, D))
    xs, h0, w = rng.standard_normal((T, D)), rng.standard_normal(H), rng.standard_normal(H)
    return lambda: [Duplicated(W.copy(), np.zeros((H, H))), Duplicated(U.copy(), np.zeros((H, D))),
                    xs, Duplicated(h0.copy(), w.copy()), Duplicated(np.zeros(H), np.zeros(H))]


def rk4_args(n=5, steps=20):
    rng = np.random.default_rng(3)
    y0, w = rng.standard_normal(n), rng.standard_normal(n)

    def scratch():
        return Duplicated(np.zeros(n), np.zeros(n))
    return lambda: [Duplicated(y0.copy(), w.copy()), Active(0.3), 0.05, steps,
                    scratch(), scratch(), scratch(), scratch(), scratch()]


def relax_args(n=12):
    rng = np.random.default_rng(4)
    w, f = rng.standard_normal(n), 0.1 * np.linspace(0.0, 1.0, n)
    return lambda: [Duplicated(np.zeros(n), w.copy()), Duplicated(f.copy(), np.zeros(n)), Active(0.8),
                    1e-6]


def alloc_args(n=12, steps=9):
    rng = np.random.default_rng(5)
    u0, w = rng.standard_normal(n), rng.standard_normal(n)
    return lambda: [Duplicated(u0.copy(), w.copy()), Active(0.2), steps]


CASES = {"heat": (heat, heat_args), "rnn": (rnn, rnn_args), "rk4": (rk4, rk4_args),
         "relax": (relax, relax_args), "heat_alloc": (heat_alloc, alloc_args),
         "heat_scratch": (heat_scratch, alloc_args)}
BUDGETS = ["1B", "2KB", "auto"]     # 1B: the fewest snapshots (two); 2KB: some; auto: all


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("memory", BUDGETS)
def test_equals_full_tape(name, memory):
    kernel, args = CASES[name]
    assert checkpointed(kernel, args()(), memory)
    same_as_tape(args(), kernel, memory)


@pytest.mark.parametrize("name", sorted(CASES))
def test_finite_differences(name):
    kernel, args = CASES[name]
    report = check_gradient(kernel, *args()(), memory="1KB")
    assert report.passed, str(report)


def prange_args(n=30, steps=12):
    rng = np.random.default_rng(8)
    u0, w = rng.standard_normal(n), rng.standard_normal(n)
    return lambda: [Duplicated(u0.copy(), w.copy()), Duplicated(np.zeros(n), np.zeros(n)),
                    Active(0.3), steps]


@pytest.mark.parametrize("memory", ["1B", "auto"])
def test_prange_in_the_time_loop_is_checkpointed(memory):
    """A time loop around parallel loops is checkpointed (the launches' argument blocks,
    schedules and thread state are the step's own; tests/test_checkpointing_parallel.py has
    more), and the gradient under memory= is the tape's and right."""
    assert checkpointed(heat_prange, prange_args()(), memory)
    assert len(explain(heat_prange, *prange_args()(), memory=memory).checkpointed) == 1
    same_as_tape(prange_args(), heat_prange, memory)
    report = check_gradient(heat_prange, *prange_args()(), memory=memory)
    assert report.passed, str(report)


def test_memory_outside_reverse_mode_is_refused():
    """Forward mode, BatchDuplicated seeds (reverse) and their compiled entries do not
    checkpoint: memory= other than 'tape' raises instead of being ignored."""
    u, w = np.linspace(0.0, 1.0, 8), np.ones(8)
    with pytest.raises(NotImplementedError, match="forward mode does not checkpoint"):
        autodiff_api(heat, Duplicated(u.copy(), w.copy()), Active(0.3), 4, mode=Forward,
                     memory="1KB")
    with pytest.raises(NotImplementedError, match="BatchDuplicated"):
        autodiff_api(heat, BatchDuplicated(u.copy(), (w.copy(), w.copy())), Active(0.3), 4,
                     memory="auto")
    with pytest.raises(NotImplementedError, match="forward mode"):
        compile_gradient(heat, Duplicated(u.copy(), w.copy()), Active(0.3), 4, mode=Forward,
                         memory="auto")
    tangent = autodiff_api(heat, Duplicated(u.copy(), w.copy()), Active(0.3, 1.0), 4,
                           mode=Forward, memory="tape")
    assert tangent is None


def test_tape_is_not_checkpointed():
    assert not checkpointed(heat, heat_args()(), "tape")


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 17, 64])
def test_trip_counts(steps):
    same_as_tape(heat_args(n=9, steps=steps), heat, "1B")
    same_as_tape(heat_args(n=9, steps=steps), heat, "500B")


def overwritten_args():
    rng = np.random.default_rng(6)
    u0, c, w = rng.standard_normal(7), 0.5 * rng.standard_normal(7), rng.standard_normal(7)
    return lambda: [Duplicated(u0.copy(), w.copy()), Duplicated(c.copy(), np.zeros(7)), 5]


@pytest.mark.parametrize("kernel,make", [(carried_float, alloc_args(n=7, steps=6)),
                                         (overwritten_after, overwritten_args())])
def test_fallback_to_full_tape(kernel, make):
    """Loops the pass cannot take keep the full tape, and the gradient is right."""
    assert not checkpointed(kernel, make(), "1B")
    report = check_gradient(kernel, *make(), memory="1B")
    assert report.passed, str(report)


def test_explain_reports_checkpointed_loops():
    e = explain(heat, *heat_args(n=40, steps=100)(), memory="2KB")
    (c,) = e.checkpointed
    assert c.steps == 100 and c.snapshot_bytes == 40 * 8 + 32
    assert 2 <= c.snapshots <= c.slots == 2000 // c.snapshot_bytes - 2
    assert c.held == (c.snapshots + 2) * c.snapshot_bytes <= 2000 and c.within_budget
    assert c.recomputed > 0 and c.recomputation == 1 + c.recomputed / 100
    assert "checkpointed loops: 1" in str(e) and "test_checkpointing.py:" in c.source
    assert explain(heat, *heat_args(n=40, steps=100)(), memory="tape").checkpointed == []
    (tiny,) = explain(heat, *heat_args(n=40, steps=100)(), memory="1B").checkpointed
    assert tiny.slots == 2 and not tiny.within_budget and "over the budget" in str(tiny)
    every = explain(heat, *heat_args(n=40, steps=100)(), memory="1MB").checkpointed[0]
    assert every.snapshots == 100 and every.recomputed == 0


def test_auto_keeps_the_full_tape_when_it_fits():
    """memory="auto": the kernel keeps the loop beside its checkpointed call and takes the loop
    (the full tape) when the trip bound times the state's bytes fits the budget. One compiled
    gradient chooses per call: with a budget of 2,000 bytes, 3 steps of heat on 40 points
    (336 bytes of state) keep the full tape, 30 steps are checkpointed."""
    small = Memory(2000, auto=True)
    for steps, full in ((3, True), (30, False), (3, True)):
        same_as_tape(heat_args(steps=steps), heat, small)
        (c,) = explain(heat, *heat_args(steps=steps)(), memory=small).checkpointed
        assert c.full_tape is full
        assert c.snapshot_bytes == 40 * 8 + 32
        if full:
            assert "full tape kept" in str(c) and c.steps * c.snapshot_bytes <= 2000
        else:
            assert c.steps == 30 and c.recomputed > 0
    (c,) = explain(heat, *heat_args(n=40, steps=100)(), memory="auto").checkpointed
    assert c.full_tape and c.budget == auto_budget()
    report = check_gradient(heat, *heat_args(steps=30)(), memory=small)
    assert report.passed, str(report)


@pytest.mark.parametrize("name, make, low, high", [
    ("heat", heat_args(n=40, steps=100), 0.8, 1.0),
    ("rnn", rnn_args(T=200), 0.7, 0.9),
    ("rk4", rk4_args(steps=100), 1.7, 2.0)])
def test_full_tape_estimate_against_the_tape(name, make, low, high):
    """"auto"'s estimate of the full tape (trip bound x bytes of the state) against the tape the
    gradient then keeps (explain's count of its entries): within a factor of 2 for the three
    kernels (docs/checkpointing.md). Heat and the RNN tape a little less than their state per
    step, RK4 about twice its state (the stages' sin arguments)."""
    kernel = CASES[name][0]
    (c,) = explain(kernel, *make(), memory="auto").checkpointed
    assert c.full_tape and c.tape_bytes > 0
    assert low <= c.tape_bytes / c.estimate <= high
    assert f"estimate {c.estimate} B; the tape of this call: {c.tape_bytes} B" in str(c)
    assert c.tape_bytes == explain(kernel, *make(), memory="tape").tape_bytes

def test_heat_beyond_memory():
    """100,000 points x 10,000 steps: a full tape of 8 GB; checkpointed within 256 MB (the
    snapshots, the copy of the final state included; one step's own tape comes on top).
    Checked against central differences along random directions (L is linear in u) and in
    alpha. About 10 s for the gradient and 1 s per primal run on one core."""
    n, steps, budget = 100_000, 10_000, 256 * 10**6
    rng = np.random.default_rng(7)
    u0 = np.sin(np.linspace(0.0, np.pi, n)) + 0.1 * rng.standard_normal(n)
    w = rng.standard_normal(n)
    du = w.copy()
    _, dalpha, _ = autodiff(heat, Duplicated(u0.copy(), du), Active(0.4), steps, memory="256MB")

    def loss(u, alpha):
        u = u.copy()
        heat(u, alpha, steps)
        return float(w @ u)
    for k in range(2):
        v = rng.standard_normal(n)
        h = 1e-3
        fd = (loss(u0 + h * v, 0.4) - loss(u0 - h * v, 0.4)) / (2 * h)
        assert du @ v == pytest.approx(fd, rel=1e-7, abs=1e-9 * np.abs(w).sum())
    h = 1e-6
    fd = (loss(u0, 0.4 + h) - loss(u0, 0.4 - h)) / (2 * h)
    assert dalpha == pytest.approx(fd, rel=1e-5)
    (c,) = checkpointed_loops(compile_gradient(heat, Duplicated(u0, du), Active(0.4), steps,
                                               memory="256MB"))
    assert c.steps == steps and c.snapshot_bytes == n * 8 + 32
    assert c.held <= budget and (c.slots + 2) * c.snapshot_bytes <= budget
    assert c.recomputed < 3 * steps
