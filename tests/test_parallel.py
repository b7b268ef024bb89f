"""Gradients of `@njit(parallel=True)` kernels with `prange`: both sweeps run through Numba's
parallel-for on its threads. Each kernel is checked with 1 and 2 threads against the gradient
of its serial copy and against finite differences."""
import numba
import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

from enzyme_py import (Active, BatchDuplicated, Const, Duplicated, Forward, UnsupportedError,
                       autodiff, check_gradient,
                       explain)

import parallel_kernels as K
from enzyme_py.modes.reverse import prepare, reverse_call
from enzyme_py.workspace import release_tape
from ir_passes import ParallelUpdates

N = 97


def _elementwise(rng):
    return K.elementwise, [Duplicated(rng.standard_normal(N), np.zeros(N)),
                           Duplicated(np.zeros(N), rng.standard_normal(N))], 1.0


def _gather(rng):
    m = 3 * N
    pairs = rng.integers(0, N, (m, 2))
    return K.gather, [Duplicated(rng.standard_normal(N), np.zeros(N)), Const(pairs),
                      Duplicated(np.zeros(m), rng.standard_normal(m))], 1.0


def _weighted_sum(rng):
    return K.weighted_sum, [Active(1.7), Duplicated(rng.standard_normal(N), np.zeros(N))], 0.8


def _nbody(rng):
    n = 23
    return K.nbody_forces, [Duplicated(rng.standard_normal((n, 3)), np.zeros((n, 3))),
                            Duplicated(rng.random(n) + 0.5, np.zeros(n)),
                            Duplicated(np.zeros((n, 3)), rng.standard_normal((n, 3)))], 1.0


def _local_features(rng):
    return K.local_features, [Duplicated(rng.standard_normal(N), np.zeros(N)),
                              Duplicated(np.zeros(N), rng.standard_normal(N))], 1.0


def _shrink(rng):
    return K.shrink, [Duplicated(rng.standard_normal(N), np.zeros(N)), Active(0.3),
                      Duplicated(np.zeros(N), rng.standard_normal(N))], 1.0


def _heat(rng):
    return K.heat, [Duplicated(rng.standard_normal(N), rng.standard_normal(N)), Active(0.2),
                    Const(5)], 1.0


def _array_expression(rng):
    return K.array_expression, [Duplicated(rng.standard_normal(N), np.zeros(N)), Active(0.7)], 1.3


def _stencil2d(rng):
    return K.stencil2d, [Duplicated(rng.standard_normal((9, 8)), np.zeros((9, 8))),
                         Duplicated(np.zeros((9, 8)), rng.standard_normal((9, 8)))], 1.0


def _relax_rows(rng):
    return K.relax_rows, [Duplicated(rng.standard_normal((9, 8)), rng.standard_normal((9, 8))),
                          Active(0.3), Const(4)], 1.0


def _rotate_rows(rng):
    return K.rotate_rows, [Duplicated(rng.standard_normal((13, 2)), rng.standard_normal((13, 2))),
                           Duplicated(rng.standard_normal(13), np.zeros(13))], 1.0


def _energy_then_scale(rng):
    return K.energy_then_scale, [Duplicated(rng.standard_normal(N), np.zeros(N)),
                                 Duplicated(np.zeros(N), np.zeros(N)), Active(0.4)], 1.0


def _prepare_then_map(rng):
    return K.prepare_then_map, [Duplicated(rng.standard_normal(N), np.zeros(N)),
                                Duplicated(np.zeros(N), rng.standard_normal(N))], 1.0


def _grid_map(rng):
    return K.grid_map, [Duplicated(rng.standard_normal((7, 6)), np.zeros((7, 6))),
                        Duplicated(np.zeros((7, 6)), rng.standard_normal((7, 6)))], 1.0


def _shifted_range(rng):
    return K.shifted_range, [Duplicated(rng.standard_normal(N), np.zeros(N)),
                             Duplicated(np.zeros(N), rng.standard_normal(N))], 1.0


def _two_stages(rng):
    return K.two_stages, [Duplicated(rng.standard_normal(N), np.zeros(N)),
                          Duplicated(np.zeros(N), rng.standard_normal(N))], 1.0


CASES = {"elementwise": _elementwise, "rotate_rows": _rotate_rows, "grid_map": _grid_map,
         "two_stages": _two_stages,
         "shifted_range": _shifted_range,
         "energy_then_scale": _energy_then_scale, "prepare_then_map": _prepare_then_map,
         "gather": _gather, "weighted_sum": _weighted_sum,
         "nbody_forces": _nbody, "local_features": _local_features, "shrink": _shrink,
         "heat": _heat, "array_expression": _array_expression, "stencil2d": _stencil2d,
         "relax_rows": _relax_rows}


def _copy(args):
    out = []
    for a in args:
        if isinstance(a, Duplicated):
            out.append(Duplicated(a.value.copy(), a.shadow.copy()))
        elif isinstance(a, Active):
            out.append(Active(a.value, a.tangent))
        else:
            out.append(Const(np.copy(a.value) if isinstance(a.value, np.ndarray) else a.value))
    return out


@pytest.fixture
def threads():
    before = numba.get_num_threads()
    yield lambda k: numba.set_num_threads(min(k, numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(before)


def _run(kernel, args, seed):
    args = _copy(args)
    derivs = autodiff(kernel, *args, seed=seed)
    return derivs, args


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_serial_gradient(case, nthreads, threads):
    threads(nthreads)
    kernel, args, seed = CASES[case](np.random.default_rng(7))
    got, got_args = _run(kernel, args, seed)
    want, want_args = _run(K.serial(kernel), args, seed)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    for g, w in zip(got_args, want_args):
        np.testing.assert_allclose(np.asarray(g.value), np.asarray(w.value), rtol=1e-13, atol=0)
        if isinstance(g, Duplicated):
            np.testing.assert_allclose(g.shadow, w.shadow, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_finite_differences(case, nthreads, threads):
    threads(nthreads)
    kernel, args, seed = CASES[case](np.random.default_rng(3))
    report = check_gradient(kernel, *args, seed=seed)
    assert report.passed, str(report)


def test_product_reduction_is_refused():
    x = np.linspace(0.5, 1.5, 9)
    with pytest.raises(UnsupportedError, match="reduction variable"):
        autodiff(K.product, Duplicated(x, np.zeros(9)))


def _allocations():
    _nrt_python.memsys_enable_stats()
    s = rtsys.get_allocation_stats()
    return s.alloc - s.free


def test_exception_in_body(threads):
    """A body that raises on the calling thread: the same exception, shadows untouched, nothing
    leaked. (Numba loses an exception raised on another thread: the kernel returns normally;
    its gradient then raises a SystemError instead of returning a gradient.)"""
    threads(1)
    x = np.linspace(1.0, 2.0, 11)
    dx, y, dy = np.zeros(11), np.zeros(11), np.ones(11)
    autodiff(K.checked_roots, Duplicated(x, dx), Duplicated(y, dy))     # compiles
    np.testing.assert_allclose(dx, 1.5 * np.sqrt(x))
    x[4] = -1.0
    dx, dy = np.zeros(11), np.ones(11)
    before = _allocations()
    with pytest.raises(ValueError, match="negative input"):
        autodiff(K.checked_roots, Duplicated(x, dx), Duplicated(y, dy))
    assert _allocations() == before
    assert not dx.any() and (dy == 1.0).all()
    threads(2)
    x[4], x[-1] = 1.0, -1.0
    with pytest.raises((ValueError, SystemError)):
        autodiff(K.checked_roots, Duplicated(x, dx), Duplicated(y, dy))
    assert not dx.any() and (dy == 1.0).all()


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("case", ["gather", "weighted_sum", "nbody_forces", "heat"])
def test_deterministic_bits(case, nthreads, threads):
    """deterministic=True: the same bits over 20 runs (and the serial gradient's values)."""
    threads(nthreads)
    kernel, args, seed = CASES[case](np.random.default_rng(11))
    runs = []
    for _ in range(20):
        a = _copy(args)
        d = autodiff(kernel, *a, seed=seed, deterministic=True)
        runs.append([x.shadow.tobytes() for x in a if isinstance(x, Duplicated)] +
                    [np.float64(v).tobytes() for v in d if v is not None])
    assert all(r == runs[0] for r in runs)
    want, _ = _run(K.serial(kernel), args, seed)
    got = autodiff(kernel, *_copy(args), seed=seed, deterministic=True)
    for g, w in zip(got, want):
        if g is not None:
            assert g == pytest.approx(w, rel=1e-12)


def test_deterministic_refuses_atomic_updates(threads):
    """An array the loop writes, whose shadow several iterations update, needs atomic adds:
    deterministic=True refuses it; by default the gradient is the serial one."""
    threads(2)
    rng = np.random.default_rng(2)
    state, idx = rng.standard_normal((40, 2)), rng.integers(0, 40, 40)
    with pytest.raises(UnsupportedError, match="deterministic"):
        autodiff(K.pull_column, Duplicated(state.copy(), np.ones((40, 2))), Const(idx),
                 deterministic=True)
    seed = rng.standard_normal((40, 2))
    got, want = np.array(seed), np.array(seed)
    autodiff(K.pull_column, Duplicated(state.copy(), got), Const(idx))
    autodiff(K.serial(K.pull_column), Duplicated(state.copy(), want), Const(idx))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_scatter_add(threads):
    """`out[idx[i]] += ...` passes out's shadow through: no atomic adds, deterministic."""
    threads(2)
    x, idx = np.linspace(0.0, 1.0, 8), np.array([0, 1, 1, 2, 0, 3, 3, 1])
    dx = np.zeros(8)
    autodiff(K.scatter_add, Duplicated(x, dx), Const(idx), Duplicated(np.zeros(4), np.ones(4)),
             deterministic=True)
    np.testing.assert_allclose(dx, 2.0 * x)


def test_explain_reports_shadow_updates():
    """explain names how each shadow update of a prange body is made."""
    x, pairs = np.linspace(0.0, 1.0, 12), np.array([[0, 1], [1, 2], [2, 0]])
    text = str(explain(K.gather, Duplicated(x, np.zeros(12)), Const(pairs),
                       Duplicated(np.zeros(3), np.ones(3))))
    assert "shadow updates in parallel loops: 3" in text
    assert text.count("privatised per thread") == 2 and "private (the iteration's own slot)" in text


def _tangents(args, rng):
    out = []
    for a in args:
        if isinstance(a, Duplicated):
            out.append(Duplicated(a.value.copy(), rng.standard_normal(a.value.shape)))
        elif isinstance(a, Active):
            out.append(Active(a.value, 0.5))
        else:
            out.append(a)
    return out


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_forward_matches_serial(case, nthreads, threads):
    """Forward mode: the tangents of the serial copy's forward mode."""
    threads(nthreads)
    kernel, args, _ = CASES[case](np.random.default_rng(4))
    args = _tangents(args, np.random.default_rng(9))
    got, want = _copy(args), _copy(args)
    t_got = autodiff(kernel, *got, mode=Forward)
    t_want = autodiff(K.serial(kernel), *want, mode=Forward)
    if t_want is None:
        assert t_got is None
    else:
        assert t_got == pytest.approx(t_want, rel=1e-12, abs=1e-12)
    for g, w in zip(got, want):
        if isinstance(g, Duplicated):
            np.testing.assert_allclose(g.shadow, w.shadow, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(g.value, w.value, rtol=1e-13)


def test_forward_batched(threads):
    """BatchDuplicated: three directions in one forward call."""
    threads(2)
    x = np.linspace(-1.0, 1.0, N)
    dirs = tuple(np.random.default_rng(k).standard_normal(N) for k in range(3))
    ts = autodiff(K.weighted_sum, Active(0.3, (0.0, 0.0, 0.0)), BatchDuplicated(x, dirs),
                  mode=Forward)
    for t, d in zip(ts, dirs):
        one = autodiff(K.serial(K.weighted_sum), Active(0.3, 0.0), Duplicated(x, d.copy()),
                       mode=Forward)
        assert t == pytest.approx(one, rel=1e-12)


def test_forward_exception(threads):
    threads(1)
    x = np.linspace(1.0, 2.0, 11)
    x[3] = -1.0
    with pytest.raises(ValueError, match="negative input"):
        autodiff(K.checked_roots, Duplicated(x, np.ones(11)), Duplicated(np.zeros(11), np.zeros(11)),
                 mode=Forward)


@pytest.mark.parametrize("case", ["gather", "heat", "weighted_sum"])
def test_no_leak(case, threads):
    """Launch records, task frames and shadow copies are all freed."""
    threads(2)
    kernel, args, seed = CASES[case](np.random.default_rng(1))
    autodiff(kernel, *_copy(args), seed=seed)
    before = _allocations()
    for _ in range(50):
        autodiff(kernel, *_copy(args), seed=seed)
    assert _allocations() == before


def _generated(kernel, *args):
    from enzyme_py import inspect
    g = inspect(kernel, *args)
    assert g.error is None, g.error
    return g.generated


def test_fused_launches():
    """A prange loop that ends the kernel runs both sweeps in one launch (the body's whole
    gradient per task); a loop followed by differentiated code, inside a time loop, feeding a
    reduction or raising in its body keeps the split launch (forward, then reverse)."""
    rng = np.random.default_rng(5)
    for case in ("elementwise", "gather", "nbody_forces", "stencil2d", "grid_map",
                 "shifted_range", "rotate_rows", "prepare_then_map"):
        kernel, args, _ = CASES[case](rng)
        text = _generated(kernel, *args)
        assert ".grad." in text and ".task.rev." not in text, case
    x = rng.standard_normal(N)
    split = [(K.energy_then_scale, [Duplicated(x, np.zeros(N)), Duplicated(np.zeros(N),
                                                                          np.zeros(N)), Active(0.4)]),
             (K.checked_roots, [Duplicated(x, np.zeros(N)), Duplicated(np.zeros(N), np.ones(N))])]
    for case in ("heat", "weighted_sum"):
        kernel, args, _ = CASES[case](rng)
        split.append((kernel, args))
    for kernel, args in split:
        text = _generated(kernel, *args)
        assert ".task.rev." in text, kernel.__name__
    kernel, args, _ = CASES["two_stages"](rng)
    text = _generated(kernel, *args)       # the first launch split, the second fused
    assert text.count(".task.rev.") and ".grad." in text


def test_rows_of_2d_arrays_are_private(threads):
    """`x[i, 0]`, `x[i, 1]` of a C-contiguous 2-D array are iteration i's own: plain updates, so
    an in-place row update is deterministic; a 1-D array indexed `y[i * m + k]` is not known
    to be (m is any integer)."""
    threads(2)
    rng = np.random.default_rng(8)
    x, theta = rng.standard_normal((31, 2)), rng.standard_normal(31)
    text = str(explain(K.rotate_rows, Duplicated(x.copy(), np.ones((31, 2))),
                       Duplicated(theta, np.zeros(31))))
    assert text.count("private (the iteration's own slot)") == 5, text    # x: 2 loads, 2 stores
    got = [Duplicated(x.copy(), rng.standard_normal((31, 2))), Duplicated(theta, np.zeros(31))]
    want = _copy(got)
    autodiff(K.rotate_rows, *got, deterministic=True)
    autodiff(K.serial(K.rotate_rows), *want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.shadow, w.shadow, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g.value, w.value, rtol=1e-13)
    text = str(explain(K.interleave, Duplicated(theta, np.zeros(31)), Const(2),
                       Duplicated(np.zeros(62), np.ones(62))))
    assert text.count("atomic (an access to this memory is not linear") == 2, text    # y


@pytest.mark.parametrize("nthreads", [1, 2])
@pytest.mark.parametrize("nodes", [50, 200_000])
def test_copies_or_atomics_by_size(nodes, nthreads, threads):
    """A gather privatises the shadow of the array it reads while the copies are small, and
    adds atomically into it when the array has more elements than the loop has iterations
    (and over PRIVATE_ELEMENTS): both give the serial gradient and the analytic one. The
    copies are made by a first call and kept with its launch record."""
    threads(nthreads)
    rng = np.random.default_rng(nodes)
    x, idx = rng.standard_normal(nodes), rng.integers(0, nodes, 40)
    idx[:4] = idx[4]            # several iterations add into one element
    dy = rng.standard_normal(40)
    dx = np.zeros(nodes)
    autodiff(K.sparse_gather, Duplicated(x, dx), Const(idx), Duplicated(np.zeros(40), dy.copy()))
    want = np.zeros(nodes)
    np.add.at(want, idx, np.cos(x[idx]) * x[idx // 2] * dy)
    np.add.at(want, idx // 2, np.sin(x[idx]) * dy)
    np.testing.assert_allclose(dx, want, rtol=1e-12, atol=1e-12)
    serial = np.zeros(nodes)
    autodiff(K.serial(K.sparse_gather), Duplicated(x, serial), Const(idx),
             Duplicated(np.zeros(40), dy.copy()))
    np.testing.assert_allclose(dx, serial, rtol=1e-12, atol=1e-12)
    _nrt_python.memsys_enable_stats()
    first, repeat = [], []  # allocations of a first call (the copies are the difference), of a
    for updates in (ParallelUpdates.AUTO, ParallelUpdates.ATOMIC):    # repeat call (none)
        args = [Duplicated(x, np.zeros(nodes)), Const(idx), Duplicated(np.zeros(40), dy.copy())]
        release_tape(prepare(K.sparse_gather, args, "auto", updates=updates)[0])
        for out in (first, repeat):
            before = rtsys.get_allocation_stats().alloc
            reverse_call(K.sparse_gather, args, 1.0, updates=updates)
            out.append(rtsys.get_allocation_stats().alloc - before)
    assert (first[0] > first[1]) == (nodes == 50), first
    assert repeat[0] == repeat[1], repeat


def test_explain_says_copies_are_chosen_by_size():
    x, pairs = np.linspace(0.0, 1.0, 12), np.array([[0, 1], [1, 2], [2, 0]])
    text = str(explain(K.gather, Duplicated(x, np.zeros(12)), Const(pairs),
                       Duplicated(np.zeros(3), np.ones(3))))
    assert text.count("atomic at a call where the copies exceed") == 2, text


def test_fused_body_keeps_its_tape_per_thread(threads):
    """The tape of a fused body's gradient (n-body's inner loop) is parked per thread between
    calls, like a kernel gradient's: repeated calls allocate none, and `release_tape` on the
    gradient frees every thread's."""
    from enzyme_py import compile_gradient
    kernel, args, seed = CASES["nbody_forces"](np.random.default_rng(6))
    grad = compile_gradient(kernel, *_copy(args))
    release_tape(grad)
    before = _allocations()
    threads(1)
    autodiff(kernel, *_copy(args), seed=seed)
    held = _allocations() - before
    assert held > 0
    for _ in range(5):
        autodiff(kernel, *_copy(args), seed=seed)
    assert _allocations() - before == held
    threads(2)
    for _ in range(5):
        autodiff(kernel, *_copy(args), seed=seed)
    assert release_tape(grad)
    assert _allocations() == before
