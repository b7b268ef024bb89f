"""Split mode reuses the memory of freed tapes (modes/frame_pool.py): a reused frame gives the
derivatives a new one gives, and no live tape shares memory with another."""
import gc
import threading

import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, augmented_forward, autodiff, explain, reverse
from enzyme_py.workspace import release_split_tapes
from tests.nrt_stats import unfreed


@njit
def heat(u, tmp, steps, c):
    n = u.shape[0]
    for _ in range(steps):
        for i in range(1, n - 1):
            tmp[i] = u[i] + c * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = tmp[i] * (1.0 + 0.1 * np.tanh(tmp[i]))
    if u[1] > 1e6:
        raise ValueError("blew up")


def first_bytes(tape, frame):
    from enzyme_py.modes.frame_pool import frame_bytes
    return frame_bytes(tape.layout, frame)


def _start(n, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, n), rng.normal(size=n)


def _forward(u0, w, steps=4):
    """A tape of heat from u0, with the seed w on u's shadow; (tape, du)."""
    du = w.copy()
    _, tape = augmented_forward(heat, Duplicated(u0.copy(), du), Duplicated(np.zeros_like(u0),
                                np.zeros_like(u0)), steps, 0.2)
    return tape, du


def _expected(u0, w, steps=4):
    du = w.copy()
    autodiff(heat, Duplicated(u0.copy(), du), Duplicated(np.zeros_like(u0), np.zeros_like(u0)),
             steps, 0.2)
    return du


def _loss(u0, w, steps=4):
    u = u0.copy()
    heat(u, np.zeros_like(u), steps, 0.2)
    return float(w @ u)


def test_a_freed_tape_is_reused_and_gives_the_derivatives_of_a_new_one():
    u0, w = _start(50, 0)
    first, _ = _forward(u0, w)
    frame, pool = first._frame, first._split.pool
    first.free()
    assert pool.nbytes == first_bytes(first, frame) > 0
    u1, w1 = _start(50, 1)
    again, du = _forward(u1, w1)
    assert again._frame == frame and pool.nbytes == 0    # the parked frame, filled again
    reverse(again)
    assert np.allclose(du, _expected(u1, w1), rtol=1e-13, atol=0)
    e = np.zeros(50)
    e[7] = 1e-6
    fd = (_loss(u1 + e, w1) - _loss(u1 - e, w1)) / 2e-6
    assert du[7] == pytest.approx(fd, rel=1e-6)
    again.free()
    parked = pool.nbytes
    assert parked >= first_bytes(again, frame)
    assert release_split_tapes(heat) == parked and pool.nbytes == 0
    fresh, dfresh = _forward(u1, w1)
    reverse(fresh)
    assert np.array_equal(du, dfresh)           # a new frame: the same derivatives


def test_a_reused_frame_grows_and_reports_this_call():
    small, _ = _forward(*_start(20, 2))
    small.free()
    big, du = _forward(*_start(400, 3), steps=3)     # the small frame's arrays grow
    assert sorted(big.iterations().values()) == [3, 3 * 398]
    size = big.nbytes
    assert size >= 3 * 398 * 8 and f"tape: {size} bytes" in str(explain(big))
    reverse(big)
    assert np.allclose(du, _expected(*_start(400, 3), steps=3), rtol=1e-13, atol=0)
    big.free()
    again, du = _forward(*_start(30, 4), steps=2)    # capacities kept, counters reset
    assert again.nbytes == size and sorted(again.iterations().values()) == [2, 2 * 28]
    reverse(again)
    assert np.allclose(du, _expected(*_start(30, 4), steps=2), rtol=1e-13, atol=0)


def test_live_tapes_stay_independent_while_freed_memory_is_reused():
    (ua, wa), (ub, wb), (uc, wc) = _start(40, 5), _start(40, 6), _start(40, 7)
    a, da = _forward(ua, wa)
    b, db = _forward(ub, wb)
    assert a._frame != b._frame
    freed = b._frame
    reverse(b)
    b.free()
    c, dc = _forward(uc, wc)
    assert c._frame == freed and c._frame != a._frame
    reverse(c)
    reverse(a)                                   # a's tape, untouched by c's forward sweep
    assert np.allclose(da, _expected(ua, wa), rtol=1e-13, atol=0)
    assert np.allclose(dc, _expected(uc, wc), rtol=1e-13, atol=0)
    a.free()
    c.free()


def test_the_pool_is_bounded():
    tapes = [_forward(*_start(30, k))[0] for k in range(4)]
    pool = tapes[0]._split.pool
    pool.clear()
    for t in tapes:
        t.free()
    assert len(pool._frames) == pool.max_frames == 2
    pool.clear()
    was, pool.max_bytes = pool.max_bytes, 8
    try:
        t = _forward(*_start(30, 0))[0]
        t.free()
        assert pool.nbytes == 0                  # over the byte cap: freed, not parked
    finally:
        pool.max_bytes = was


def test_tapes_on_many_threads():
    errors = []

    def work(k):
        try:
            for j in range(5):
                u0, w = _start(30 + k, 10 * k + j)
                tape, du = _forward(u0, w)
                reverse(tape)
                if not np.allclose(du, _expected(u0, w), rtol=1e-13, atol=0):
                    errors.append((k, j))
                tape.free()
        except Exception as e:     # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_failed_forward_frees_its_frame_and_leaks_nothing():
    u0, w = _start(30, 8)
    gc.collect()
    release_split_tapes(heat)
    _forward(u0, w)[0].free()                    # one frame parked, for the first failing call

    def fail():
        bad = u0.copy()
        bad[1] = 1e9
        with pytest.raises(ValueError, match="blew up"):
            _forward(bad, w, steps=1)

    def cycle():
        tape, _ = _forward(u0, w)
        reverse(tape)
        tape.free()
    assert unfreed(fail, 5) == (0, 0)
    assert unfreed(cycle, 5) == (0, 0)
    with pytest.raises(TypeError):               # the call never runs: its frame goes back
        augmented_forward(heat, Duplicated(np.zeros(4, np.int64), np.zeros(4, np.int64)),
                          Duplicated(np.zeros(4), np.zeros(4)), 1, 0.2)


@njit
def layer(W, x, y, k):
    t = np.zeros(x.shape[0])                     # a temporary the tape's call allocates
    for _ in range(k):
        t = np.tanh(W @ (x + t))                 # `@`: saved inputs in the tape's arena
    y[:] = t * t
    return t.sum()


@pytest.mark.parametrize("sizes", [(6, 3, 9), (9, 6, 3)])
def test_reused_frames_with_temporaries_and_matrix_products(sizes):
    """Growing and shrinking calls through the same parked frame, each against autodiff."""
    rng = np.random.default_rng(sum(sizes))
    for n in sizes:
        W, x, w = rng.normal(size=(n, n)) / n, rng.normal(size=n), rng.normal(size=n)
        dW, dx = np.zeros((n, n)), np.zeros(n)
        value, tape = augmented_forward(layer, Duplicated(W.copy(), dW), Duplicated(x.copy(), dx),
                                        Duplicated(np.zeros(n), w.copy()), 2)
        tape.reverse(seed=0.5)
        eW, ex = np.zeros((n, n)), np.zeros(n)
        autodiff(layer, Duplicated(W.copy(), eW), Duplicated(x.copy(), ex),
                 Duplicated(np.zeros(n), w.copy()), 2, seed=0.5)
        assert np.allclose(dW, eW, rtol=1e-12, atol=1e-14) and np.allclose(dx, ex, rtol=1e-12, atol=1e-14)

        def loss(x):
            y = np.zeros(n)
            r = layer(W, x, y, 2)
            return 0.5 * r + float(w @ y)
        e = np.zeros(n)
        e[0] = 1e-6
        assert value == pytest.approx(layer(W, x.copy(), np.zeros(n), 2), rel=1e-14)
        assert dx[0] == pytest.approx((loss(x + e) - loss(x - e)) / 2e-6, rel=1e-6, abs=1e-9)
        tape.free()
        assert tape._split.pool.nbytes > 0       # parked for the next size
