"""Launch records, frames, tapes and privatised copies of parallel loops are kept between
gradient calls (runtime/launch_pool.py): a repeat call with the same shapes and threads makes
no allocation beyond unboxing its arguments, and `release_tape` frees them all."""
import numba
import numpy as np
import pytest
from numba import njit
from numba.core.runtime import _nrt_python, rtsys

from enzyme_py import Active, Const, Duplicated, autodiff, check_gradient, compile_gradient
from enzyme_py.workspace import release_tape

import parallel_kernels as K

N = 41


@pytest.fixture
def threads():
    before = numba.get_num_threads()
    yield lambda k: numba.set_num_threads(min(k, numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(before)


@pytest.fixture
def nrt_stats():
    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    yield
    if not was:
        _nrt_python.memsys_disable_stats()


def _held():
    s = rtsys.get_allocation_stats()
    return s.alloc - s.free


def _heat_args(rng):
    u = np.sin(np.linspace(0.0, 3.0, N)) + 0.1 * rng.standard_normal(N)
    return u, np.zeros(N), rng.standard_normal(N), np.zeros(N)


def _counter(entry):
    """calls(k): NRT (allocations, frees) of k gradient calls from @njit code, beyond what
    unboxing the arguments costs (the difference with zero calls)."""
    @njit
    def run(u, new, alpha, steps, du, dnew, reps):
        a = 0.0
        for _ in range(reps):
            u[:] = 0.5
            du[:] = 1.0
            dnew[:] = 0.0
            a += entry(u, new, alpha, steps, du, dnew, 1.0)[0]
        return a

    def calls(args, reps):
        out = []
        for k in (0, reps):
            s = rtsys.get_allocation_stats()
            run(*args, k)
            t = rtsys.get_allocation_stats()
            out.append((t.alloc - s.alloc, t.free - s.free))
        return out[1][0] - out[0][0], out[1][1] - out[0][1]
    return calls


def test_heat_gradient_allocates_nothing_on_repeat_calls(threads, nrt_stats):
    """Time loop around two pranges, in place (the split launch: one record per launch, each
    task's frame and tape kept in it). With 1 and 2 threads: the first call keeps what it
    allocates, repeat calls allocate nothing, `release_tape` frees it all."""
    u, new, du, dnew = _heat_args(np.random.default_rng(3))
    grad = compile_gradient(K.heat_scratch, Duplicated(u.copy(), du.copy()),
                            Duplicated(new.copy(), dnew.copy()), Active(0.2), Const(6))
    release_tape(grad)
    calls = _counter(grad.entry.unchecked)     # the gradient alone: no strong-zero copies
    args = (u.copy(), new.copy(), 0.2, 6, du.copy(), dnew.copy())
    calls(args, 0)
    before = _held()
    for k in (1, 2, 1):
        threads(k)
        first = calls(args, 1)
        assert first[0] > 0 or k == 1 and _held() > before
        assert calls(args, 1) == (0, 0), k
        assert calls(args, 4) == (0, 0), k
    assert _held() > before
    assert release_tape(grad)
    assert _held() == before


@pytest.mark.parametrize("nthreads", [1, 2])
def test_heat_gradient_on_repeat_calls_matches_the_serial_one(threads, nthreads):
    """Kept frames and tapes give the same gradient on every call (their contents from a
    previous call are never read), equal to the serial kernel's, which finite differences
    check."""
    threads(nthreads)
    rng = np.random.default_rng(4)
    u, new, du, dnew = _heat_args(rng)
    serial = K.serial(K.heat_scratch)
    want_u, want_new = du.copy(), dnew.copy()
    want = autodiff(serial, Duplicated(u.copy(), want_u), Duplicated(new.copy(), want_new),
                    Active(0.2), Const(6))
    for _ in range(3):
        got_u, got_new = du.copy(), dnew.copy()
        got = autodiff(K.heat_scratch, Duplicated(u.copy(), got_u),
                       Duplicated(new.copy(), got_new), Active(0.2), Const(6))
        np.testing.assert_allclose(got_u, want_u, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(got_new, want_new, rtol=1e-12, atol=1e-13)
        assert got[2] == pytest.approx(want[2], rel=1e-12)
    assert check_gradient(serial, Duplicated(u.copy(), du.copy()), Duplicated(new.copy(), dnew.copy()),
                   Active(0.2), Const(6))


def _reduction_counter(entry):
    @njit
    def run(k, x, dx, reps):
        a = 0.0
        for _ in range(reps):
            a += entry(k, x, dx, 1.0)[0]
        return a

    def calls(args, reps):
        out = []
        for n in (0, reps):
            s = rtsys.get_allocation_stats()
            run(*args, n)
            t = rtsys.get_allocation_stats()
            out.append((t.alloc - s.alloc, t.free - s.free))
        return out[1][0] - out[0][0], out[1][1] - out[0][1]
    return calls


def test_reduction_with_privatised_scalar_allocates_nothing_on_repeat_calls(threads, nrt_stats):
    """A reduction (split launch) whose Active scalar gets a per-task copy: the copies are kept
    with the record too; the derivative stays exact (analytic)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(N)
    grad = compile_gradient(K.weighted_sum, Active(1.7), Duplicated(x.copy(), np.zeros(N)))
    release_tape(grad)
    calls = _reduction_counter(grad.entry.unchecked)     # no strong-zero copies
    args = (1.7, x.copy(), np.zeros(N))
    calls(args, 0)
    before = _held()
    for k in (2, 1):
        threads(k)
        calls(args, 1)
        # per call: Numba's array of partial sums (the kernel's own temporary), its shadow and
        # the gradient's list of shadows to free, as for any temporary; no record, frame, tape
        # or copy
        assert calls(args, 3) == (9, 9), k
        dx = np.zeros(N)
        dk = grad.entry(1.7, x, dx, 1.0)[0]
        assert dk == pytest.approx(np.sin(x).sum(), rel=1e-12)
        np.testing.assert_allclose(dx, 1.7 * np.cos(x) + 2 * x, rtol=1e-12)
    assert release_tape(grad)
    assert _held() == before


def test_heat_with_a_temporary_allocates_what_the_serial_gradient_does(threads, nrt_stats):
    """The heat kernel that allocates its scratch row (np.empty): per repeat call, its gradient
    allocates what the serial kernel's gradient allocates (the row, its shadow, the list of
    shadows to free), with 1 and 2 threads."""
    x = np.sin(np.linspace(0.0, 3.0, N))
    per_call = []
    for kernel in (K.heat, K.serial(K.heat)):
        entry = compile_gradient(kernel, Duplicated(x.copy(), np.ones(N)), Active(0.2),
                                 Const(5)).entry.unchecked    # no strong-zero copies

        @njit
        def run(u, du, reps):
            a = 0.0
            for _ in range(reps):
                a += entry(u, 0.2, 5, du, 1.0)[0]
            return a

        for k in (1, 2):
            threads(k)
            counts = []
            for reps in (0, 1, 4):
                s = rtsys.get_allocation_stats()
                run(x.copy(), np.zeros(N), reps)
                t = rtsys.get_allocation_stats()
                counts.append((t.alloc - s.alloc, t.free - s.free))
            per_call.append(tuple(a - b for a, b in zip(counts[2], counts[0])))
    assert per_call[:2] == per_call[2:] == [(12, 12)] * 2
