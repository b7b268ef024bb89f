"""Split reverse mode: augmented_forward once, reverse from the tape any number of times."""
import gc
import threading

import numpy as np
import pytest
from numba import njit, prange

from enzyme_py import (Active, Duplicated, UnsupportedError, augmented_forward, autodiff, explain,
                       reverse)


@njit
def wave(x, y, a, count):
    count[0] += 1
    for i in range(x.shape[0]):
        y[i] = np.sin(x[i]) * a
    return a * x.sum()


@njit
def heat(u, tmp, steps, c):
    n = u.shape[0]
    for _ in range(steps):
        for i in range(1, n - 1):
            tmp[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = tmp[i] * (1.0 + 0.1 * np.tanh(tmp[i]))


def _heat_loss(u0, steps, c, w):
    u = u0.copy()
    heat(u, np.zeros_like(u), steps, c)
    return float(w @ u)


def test_elementwise_against_analytic():
    x, a = np.linspace(0.1, 1.0, 7), 1.5
    y, dx, dy, count = np.zeros(7), np.zeros(7), np.full(7, 0.5), np.zeros(1, np.int64)
    value, tape = augmented_forward(wave, Duplicated(x, dx), Duplicated(y, dy), Active(a), count)
    assert value == pytest.approx(a * x.sum())
    assert np.allclose(y, np.sin(x) * a)
    derivs = reverse(tape, seed=2.0)
    assert np.allclose(dx, a * np.cos(x) * 0.5 + 2.0 * a)
    assert derivs[2] == pytest.approx(np.sin(x).sum() * 0.5 + 2.0 * x.sum())
    assert derivs[0] is None and np.all(dy == 0.0)   # y is overwritten: its shadow is consumed


def test_reverse_twice_with_other_seeds_matches_autodiff_and_runs_the_kernel_once():
    x0, a = np.linspace(-1.0, 2.0, 9), 0.7
    count = np.zeros(1, np.int64)
    x, y, dx, dy = x0.copy(), np.zeros(9), np.zeros(9), np.zeros(9)
    _, tape = augmented_forward(wave, Duplicated(x, dx), Duplicated(y, dy), Active(a), count)
    rng = np.random.default_rng(0)
    for seed in (1.0, -3.0):
        w = rng.normal(size=9)
        dx[:] = 0.0
        dy[:] = w
        got = reverse(tape, seed=seed)
        ex, ey, edx = x0.copy(), np.zeros(9), np.zeros(9)
        want = autodiff(wave, Duplicated(ex, edx), Duplicated(ey, w.copy()), Active(a),
                        np.zeros(1, np.int64), seed=seed)
        assert np.array_equal(dx, edx)
        assert got[2] == want[2]
    assert count[0] == 1


def test_heat_time_loop_against_finite_differences():
    n, steps, c = 12, 20, 0.2
    u0 = np.sin(np.linspace(0.0, 3.0, n)) + 0.5
    w = np.cos(np.arange(n))
    u, tmp, du, dtmp = u0.copy(), np.zeros(n), w.copy(), np.zeros(n)
    _, tape = augmented_forward(heat, Duplicated(u, du), Duplicated(tmp, dtmp), steps, Active(c))
    u[:] = -7.0          # the reverse sweep reads no primal memory
    dc = reverse(tape)[3]
    eps = 1e-6
    fd = np.array([(_heat_loss(u0 + eps * e, steps, c, w) - _heat_loss(u0 - eps * e, steps, c, w))
                   / (2 * eps) for e in np.eye(n)])
    assert np.allclose(du, fd, rtol=1e-6, atol=1e-8)
    fd_c = (_heat_loss(u0, steps, c + eps, w) - _heat_loss(u0, steps, c - eps, w)) / (2 * eps)
    assert dc == pytest.approx(fd_c, rel=1e-6)
    du[:] = w            # a second sweep from the same tape gives the same gradient
    dtmp[:] = 0.0
    assert reverse(tape)[3] == dc
    assert np.allclose(du, fd, rtol=1e-6, atol=1e-8)


def test_linear_heat_against_analytic():
    @njit
    def step(u, tmp, steps, c):
        n = u.shape[0]
        for _ in range(steps):
            for i in range(1, n - 1):
                tmp[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
            for i in range(1, n - 1):
                u[i] = tmp[i]
    n, steps, c = 8, 5, 0.25
    A = np.eye(n)
    for i in range(1, n - 1):
        A[i, i - 1:i + 2] += c * np.array([1.0, -2.0, 1.0])
    w = np.arange(n, dtype=float)
    u, du = np.ones(n), w.copy()
    _, tape = augmented_forward(step, Duplicated(u, du), Duplicated(np.zeros(n), np.zeros(n)),
                                steps, c)
    reverse(tape)
    assert np.allclose(du, np.linalg.matrix_power(A.T, steps) @ w)


def _wave_tape(n):
    x, y = np.linspace(0, 1, n), np.zeros(n)
    return augmented_forward(wave, Duplicated(x, np.zeros(n)), Duplicated(y, np.ones(n)),
                             Active(1.0), np.zeros(1, np.int64))[1]


def test_tape_is_freed_with_the_object_and_reports_its_size():
    small, big = _wave_tape(10), _wave_tape(1000)
    assert big.nbytes >= small.nbytes + 990 * 8      # sin(x[i]) per iteration, at least
    text = str(explain(big))
    assert f"tape: {big.nbytes} bytes" in text and "sin" in text
    assert set(big.iterations().values()) == {1000} and "1000 iterations" in text
    finalizer = small._finalizer
    del small
    gc.collect()
    assert not finalizer.alive
    big.free()
    assert big.freed and big.nbytes == 0
    with pytest.raises(ValueError, match="freed"):
        reverse(big)


def test_reverse_from_another_thread():
    x, dx = np.linspace(0, 1, 5), np.zeros(5)
    _, tape = augmented_forward(wave, Duplicated(x, dx), Duplicated(np.zeros(5), np.ones(5)),
                                Active(2.0), np.zeros(1, np.int64))
    out = []
    t = threading.Thread(target=lambda: out.append(reverse(tape)))
    t.start()
    t.join()
    assert out[0][2] == pytest.approx(np.sin(x).sum() + x.sum())
    assert np.allclose(dx, 2.0 * np.cos(x) + 2.0)


def test_integer_return_is_returned_and_not_differentiated():
    @njit
    def count_positive(x, y):
        k = 0
        for i in range(x.shape[0]):
            y[i] = x[i] * x[i]
            k += x[i] > 0
        return k
    x, dx = np.array([-1.0, 2.0, 3.0]), np.zeros(3)
    k, tape = augmented_forward(count_positive, Duplicated(x, dx), Duplicated(np.zeros(3), np.ones(3)))
    assert k == 2
    reverse(tape)
    assert np.array_equal(dx, 2 * x)


def test_bad_calls():
    @njit
    def returns_array(x):
        return x * 2.0
    x = np.ones(3)
    with pytest.raises(NotImplementedError, match="output array"):
        augmented_forward(returns_array, Duplicated(x, np.zeros(3)))
    with pytest.raises(TypeError, match="one positional argument per parameter"):
        augmented_forward(wave, Duplicated(x, np.zeros(3)))
    with pytest.raises(TypeError, match="Tape"):
        reverse(object())


@njit
def smooth(x, out, k):
    t = np.zeros(x.shape[0])
    for _ in range(k):
        for i in range(x.shape[0]):
            t[i] += np.exp(-x[i]) * x[i]
    s = np.empty(x.shape[0])
    s[:] = t * t
    for i in range(x.shape[0]):
        out[i] = s[i] + t[i]
    if out[0] > 1e6:
        raise ValueError("too large")
    return s.sum()


def test_temporaries_repeated_sweeps_and_no_leak():
    from tests.nrt_stats import unfreed
    x0 = np.linspace(0.2, 2.0, 6)
    x, out, dx, dout = x0.copy(), np.zeros(6), np.zeros(6), np.zeros(6)
    _, tape = augmented_forward(smooth, Duplicated(x, dx), Duplicated(out, dout), 3)
    rng = np.random.default_rng(1)
    for _ in range(3):
        w, seed = rng.normal(size=6), rng.normal()
        dx[:] = 0.0
        dout[:] = w
        reverse(tape, seed=seed)
        edx = np.zeros(6)
        autodiff(smooth, Duplicated(x0.copy(), edx), Duplicated(np.zeros(6), w.copy()), 3, seed=seed)
        assert np.allclose(dx, edx, rtol=1e-14, atol=0)
    t = 3 * np.exp(-x0) * x0
    dt = 3 * np.exp(-x0) * (1 - x0)
    assert np.allclose(dx, (w * (2 * t + 1) + seed * 2 * t) * dt)

    def cycle():
        a = augmented_forward(smooth, Duplicated(x0.copy(), np.zeros(6)),
                              Duplicated(np.zeros(6), np.ones(6)), 3)[1]
        reverse(a)
        reverse(a)
    assert unfreed(cycle, 10) == (0, 0)


def test_kernel_error_propagates_and_leaves_shadows():
    x, dx, dout = np.full(3, -20.0), np.full(3, 5.0), np.full(3, 2.0)
    with pytest.raises(ValueError, match="too large"):
        augmented_forward(smooth, Duplicated(x, dx), Duplicated(np.zeros(3), dout), 1)
    assert np.all(dx == 5.0) and np.all(dout == 2.0)


def test_vjp_with_out_runs_the_kernel_once(monkeypatch):
    from enzyme_py import helpers, vjp
    calls = []
    monkeypatch.setattr(helpers, "_autodiff", lambda *a, **k: calls.append("autodiff"))
    real = helpers.augmented_forward
    monkeypatch.setattr(helpers, "augmented_forward", lambda *a: calls.append("fwd") or real(*a))

    @njit
    def layer(x, y, a, count):
        for i in range(x.shape[0]):
            y[i] = np.tanh(a * x[i])
    x = np.linspace(-1, 1, 5)
    y, pullback = vjp(layer, x, 2.0, 0, out=np.zeros(5), argnums=(0, 1))
    assert np.allclose(y, np.tanh(2.0 * x))
    for w in (np.ones(5), np.arange(5.0)):
        gx, ga = pullback(w)
        sech2 = 1.0 - np.tanh(2.0 * x) ** 2
        assert np.allclose(gx, w * sech2 * 2.0) and ga == pytest.approx(np.sum(w * sech2 * x))
    assert calls == ["fwd"]


@njit
def dense(W, x, y):
    y[:] = np.tanh(W @ x)
    return np.dot(y, y)


def test_matrix_kernel_with_primal_changed_after_forward():
    rng = np.random.default_rng(0)
    W0, x0 = rng.normal(size=(4, 3)), rng.normal(size=3)
    W, x, dW, dx, dy = W0.copy(), x0.copy(), np.zeros((4, 3)), np.zeros(3), np.ones(4)
    _, tape = augmented_forward(dense, Duplicated(W, dW), Duplicated(x, dx),
                                Duplicated(np.zeros(4), dy))
    W[:] = 0.0
    x[:] = 0.0
    reverse(tape, seed=0.5)
    t = np.tanh(W0 @ x0)
    g = (1.0 + 0.5 * 2 * t) * (1 - t ** 2)          # dL/d(W x)
    assert np.allclose(dW, np.outer(g, x0)) and np.allclose(dx, W0.T @ g)
    with pytest.raises(UnsupportedError, match="parallel loops"):
        augmented_forward(par, Duplicated(np.ones(4), np.zeros(4)),
                          Duplicated(np.zeros(4), np.ones(4)))


@njit(parallel=True)
def par(x, y):
    for i in prange(x.shape[0]):
        y[i] = np.sin(x[i])


def test_vjp_with_out_of_a_parallel_kernel_falls_back_to_reverse_mode():
    from enzyme_py import vjp
    x = np.linspace(0.0, 1.0, 4)
    y, pullback = vjp(par, x, out=np.zeros(4))
    assert np.allclose(y, np.sin(x))
    assert np.allclose(pullback(np.arange(4.0)), np.arange(4.0) * np.cos(x))


@njit
def scaled_copy(x, c, y):
    for _ in range(4):
        for i in range(x.shape[0]):
            y[i] = c[i] * x[i] + y[i]


def test_forward_sweep_vectorizes_its_loops():
    """The kept frame escapes to the caller: the forward sweep works on a stack copy of it, so
    LLVM keeps the tape counters in registers and vectorizes the loop that fills the tape (with
    the counters in the heap frame, every iteration loaded and stored them: heat's forward sweep
    took 15x its primal)."""
    n = 64
    x, c, y = np.linspace(0.1, 1.0, n), np.linspace(1.0, 2.0, n), np.zeros(n)
    dx, dc, dy = np.zeros(n), np.zeros(n), np.ones(n)
    _, tape = augmented_forward(scaled_copy, Duplicated(x, dx), Duplicated(c, dc), Duplicated(y, dy))
    text = tape._split.library.get_llvm_str()
    aug = text[text.index("_split.aug.0("):]
    aug = aug[:aug.index("\n}\n")]
    assert "x double>" in aug
    reverse(tape)
    np.testing.assert_allclose(dx, 4 * c, rtol=1e-14)
    np.testing.assert_allclose(dc, 4 * x, rtol=1e-14)
    np.testing.assert_allclose(dy, 1.0)
