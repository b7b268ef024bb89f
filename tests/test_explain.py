"""explain(): cached values and tape sizes, as issue 3 asks (asserted, not only printed)."""
import inspect

import numpy as np
import numba
import pytest

from ir_passes.transforms.reverse.tape.tape_keys import Branch, CallFrame, LastValue, LoopStart, Moved, Overwritten

from enzyme_py import Active, Const, Duplicated, autodiff, check_gradient, explain


@numba.njit
def elementwise(x, y):
    for i in range(x.shape[0]):
        y[i] = np.sin(x[i]) * x[i]


@numba.njit
def heat(u, k, steps):
    n = u.shape[0]
    tmp = np.empty(n)
    for t in range(steps):
        for i in range(1, n - 1):
            tmp[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = tmp[i]


@numba.njit
def total(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.exp(x[i]) * x[i]
    return s


@numba.njit
def square_in_place(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * x[i]


@numba.njit
def square_in_place_then_fold(x):
    """The update after the loop keeps it from being fused (fusion.py): x[i] is taped."""
    n = x.shape[0]
    for i in range(n):
        x[i] = x[i] * x[i]
    x[0] = x[0] + x[n - 1]


def test_disjoint_elementwise_has_no_tape():
    n = 1000
    e = explain(elementwise, Duplicated(np.random.rand(n), np.zeros(n)),
                Duplicated(np.zeros(n), np.ones(n)))
    assert e.tape_bytes == 0 and e.cached == []


def test_aliased_elementwise_caches_the_input():
    x, dx = np.random.rand(100), np.zeros(100)
    e = explain(elementwise, Duplicated(x, dx), Duplicated(x, dx))
    assert e.tape_bytes > 0


@pytest.mark.parametrize("n, steps", [(100, 10), (200, 5)])
def test_heat_tape_sizes(n, steps):
    u = np.random.rand(n)
    const = explain(heat, Duplicated(u, np.ones(n)), Const(0.1), Const(steps))
    assert const.tape_bytes <= 64 * steps          # O(steps), nothing per element
    active = explain(heat, Duplicated(u, np.ones(n)), Active(0.1), Const(steps))
    interior = steps * (n - 2) * 8
    assert interior <= active.tape_bytes <= interior + 64 * steps
    assert np.array_equal(u, u.copy())


def test_reduction_over_read_only_input_has_no_tape_with_minimal():
    e = explain(total, Duplicated(np.random.rand(500), np.zeros(500)), cache="minimal")
    assert e.tape_bytes == 0


def test_auto_tapes_the_exp_and_recomputes_the_rest():
    e = explain(total, Duplicated(np.random.rand(500), np.zeros(500)))
    assert e.tape_bytes == 500 * 8
    assert len(e.cached) == 1 and "math call" in e.cached[0].reason


def test_in_place_square_explains_why():
    e = explain(square_in_place_then_fold, Duplicated(np.random.rand(10), np.ones(10)))
    assert e.tape_bytes == 80
    assert len(e.cached) == 1 and "later store" in e.cached[0].reason
    assert "test_explain.py" in e.cached[0].source
    assert "tape: 80 bytes" in str(e)


def test_explain_leaves_arrays_alone():
    x, dx = np.random.rand(10), np.random.rand(10)
    x0, dx0 = x.copy(), dx.copy()
    explain(square_in_place, Duplicated(x, dx))
    assert np.array_equal(x, x0) and np.array_equal(dx, dx0)


def test_cache_always_caches_more_and_agrees():
    n = 50
    args = lambda: (Duplicated(np.linspace(0.1, 1, n), np.ones(n)), Active(0.1), Const(4))  # noqa: E731
    minimal = explain(heat, *args())
    always = explain(heat, *args(), cache="always")
    assert always.tape_bytes > minimal.tape_bytes
    a, b = args(), args()
    ra = autodiff(heat, *a)
    rb = autodiff(heat, *b, cache="always")
    assert np.allclose(a[0].shadow, b[0].shadow, rtol=1e-12) and np.isclose(ra[1], rb[1], rtol=1e-12)
    assert check_gradient(heat, *args()).passed


@numba.njit
def rnn(W, U, xs, h):
    n = h.shape[0]
    tmp = np.empty(n)
    for t in range(xs.shape[0]):
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += W[i, j] * h[j]
            for j in range(xs.shape[1]):
                s += U[i, j] * xs[t, j]
            tmp[i] = np.tanh(s)
        h[:] = tmp


def test_rnn_minimal_tape_is_a_tenth_of_always():
    """Issue 3: 32 hidden units; the state overwritten each step is undone, not every load taped."""
    r = np.random.default_rng(1)

    def args():
        return (Duplicated(r.normal(0, 0.2, (32, 32)), np.zeros((32, 32))),
                Duplicated(r.normal(0, 0.2, (32, 8)), np.zeros((32, 8))),
                Duplicated(r.normal(0, 1, (10, 8)), np.zeros((10, 8))),
                Duplicated(np.zeros(32), np.ones(32)))
    minimal = explain(rnn, *args()).tape_bytes
    always = explain(rnn, *args(), cache="always").tape_bytes
    assert 0 < minimal <= always / 10
    small = (Duplicated(r.normal(0, 0.3, (4, 4)), np.zeros((4, 4))),
             Duplicated(r.normal(0, 0.3, (4, 3)), np.zeros((4, 3))),
             Duplicated(r.normal(0, 1, (3, 3)), np.zeros((3, 3))),
             Duplicated(r.normal(0, 1, 4), r.normal(0, 1, 4)))
    assert check_gradient(rnn, *small).passed


@numba.njit
def damp(h, w, steps):
    for _ in range(steps):
        h[:] = w * h + 0.5          # Numba's copy loop clamps its index with a bound set per step
    return np.sum(h * h)


@pytest.mark.parametrize("n, steps", [(64, 20), (16, 40)])
def test_slice_copy_in_a_time_loop_tapes_nothing_per_element(n, steps):
    """The copy loop's clamped index is recomputed from its bound, which is on the tape once per
    step: with w constant nothing of the arithmetic is taped either, so the tape is O(steps)."""
    r = np.random.default_rng(3)
    h, w = r.uniform(0.5, 1.0, n), r.uniform(0.5, 1.0, n)
    e = explain(damp, Duplicated(h, np.zeros(n)), Const(w), Const(steps))
    assert e.tape_bytes <= 128 * steps
    assert check_gradient(damp, Duplicated(h, np.zeros(n)), Const(w), Const(steps)).passed


@numba.njit
def heat_one_buffer(u, alpha, steps):
    r = alpha * 0.5
    for _ in range(steps):
        left = u[0]
        for i in range(1, u.shape[0] - 1):
            ui = u[i]
            u[i] = ui + r * (left - 2.0 * ui + u[i + 1])
            left = ui


@numba.njit
def running_branch(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            t = np.sin(x[i])
        else:
            t = x[i] * s
        s += t
        y[i] = s
    y[0] = y[0] * y[-1]
    return s


def test_cached_values_named_in_python_terms():
    """Each entry names its line (with the code), its Python variable when it has one, and the
    memory a reason speaks of by the argument's name, not LLVM's."""
    u = np.linspace(0.0, 1.0, 30) ** 2
    e = explain(heat_one_buffer, Duplicated(u, np.ones(30)), Active(0.1), Const(5))
    (c,) = e.cached
    assert c.code == "u[i] = ui + r * (left - 2.0 * ui + u[i + 1])"
    lines, first = inspect.getsourcelines(heat_one_buffer.py_func)
    assert c.source.endswith(f":{first + [l.strip() for l in lines].index(c.code)}")
    assert "later store to `u` may overwrite" in c.reason and "%arg" not in c.reason
    assert "u[i] = ui + r" in str(e)


def test_carried_value_named_by_its_variable():
    x = np.array([0.5, -1.0, 2.0, 0.1])
    args = (Duplicated(x, np.zeros(4)), Duplicated(np.zeros(4), np.ones(4)))
    e = explain(running_branch, *args)
    (carried,) = [c for c in e.cached if "carried" in c.reason]
    assert carried.variable == "s" and carried.source, str(e)
    assert "`s` (%" in str(e)
    assert check_gradient(running_branch, *args).passed


@numba.njit
def int_power_dynamic(x, y, n):
    for i in range(x.shape[0]):
        y[i] = x[i] ** n


def test_control_entries_say_what_they_record():
    """Tape entries that hold no primal value (the branch taken, a loop's first counter) say so
    in words, with a source line (`x ** n` with a run-time n is a loop over n's bits)."""
    x = np.linspace(0.5, 2.0, 6)
    args = (Duplicated(x, np.zeros(6)), Duplicated(np.zeros(6), np.ones(6)), Const(3))
    e = explain(int_power_dynamic, *args)
    texts = [c.instruction for c in e.cached]
    assert "from" not in texts and "start" not in texts, str(e)
    words = {k.what for k in (Branch, CallFrame, LastValue, LoopStart, Moved, Overwritten)}
    control = [c for c in e.cached if c.instruction in words]
    assert control and all(c.source for c in control), str(e)
    assert "which predecessor" not in str(e) and "loop start" not in str(e)
    assert check_gradient(int_power_dynamic, *args).passed
