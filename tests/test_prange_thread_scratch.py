"""prange bodies that keep per-thread scratch rows chosen with the thread id
(`numba.get_thread_id()`, `numba.np.ufunc.parallel._iget_thread_id()`), as a tuned demeaning
routine does: a (threads, m) scratch matrix allocated before the loop, each iteration writing
then reading its thread's row, results stored by iteration index. Reverse and forward mode,
with the default number of threads, 1 and 2, against finite differences and the analytic
derivative; the primal outputs are those of a plain call."""
import numba
import numpy as np
import pytest
from numba import njit, prange
from numba.np.ufunc.parallel import _iget_thread_id

from enzyme_py import Const, Duplicated, Forward, UnsupportedError, autodiff, check_gradient


@njit(parallel=True)
def demean_squares(x, out):
    """out[i, j] = x[i, j]^2 - mean_k x[i, k]^2, through the thread's scratch row."""
    n, m = x.shape
    scratch = np.empty((numba.get_num_threads(), m))
    for i in prange(n):
        t = numba.get_thread_id()
        for j in range(m):
            scratch[t, j] = x[i, j] * x[i, j]
        s = 0.0
        for j in range(m):
            s += scratch[t, j]
        for j in range(m):
            out[i, j] = scratch[t, j] - s / m


@njit(parallel=True)
def weighted_demean(x, w, out):
    """Two scratch matrices (a weighted row and its centred copy), the thread id read with
    Numba's intrinsic; out[i, j] = (w_j x_ij - mean_k w_k x_ik)^2."""
    n, m = x.shape
    nt = numba.get_num_threads()
    a = np.empty((nt, m))
    b = np.empty((nt, m))
    for i in prange(n):
        t = _iget_thread_id()
        mean = 0.0
        for j in range(m):
            a[t, j] = w[j] * x[i, j]
            mean += a[t, j]
        mean /= m
        for j in range(m):
            b[t, j] = a[t, j] - mean
        for j in range(m):
            out[i, j] = b[t, j] * b[t, j]


def _demean_squares_grad(x, seed):
    """d/dx of sum(seed * out)."""
    return 2 * x * (seed - seed.mean(axis=1, keepdims=True))


def _weighted_grads(x, w, seed):
    c = w * x - (w * x).mean(axis=1, keepdims=True)
    g = 2 * c * seed                      # d/d(centred)
    gc = g - g.mean(axis=1, keepdims=True)   # through the centring
    return gc * w, (gc * x).sum(axis=0)


@pytest.fixture(params=[None, 1, 2], ids=["default", "1 thread", "2 threads"])
def threads(request):
    before = numba.get_num_threads()
    if request.param is not None:
        numba.set_num_threads(min(request.param, numba.config.NUMBA_NUM_THREADS))
    yield
    numba.set_num_threads(before)


def _data(n=11, m=5):
    rng = np.random.default_rng(3)
    return rng.standard_normal((n, m)), rng.random(m) + 0.5, rng.standard_normal((n, m))


def test_demean_squares_reverse(threads):
    x, _, seed = _data()
    out, dx = np.zeros_like(x), np.zeros_like(x)
    autodiff(demean_squares, Duplicated(x, dx), Duplicated(out, seed.copy()))
    plain = np.zeros_like(x)
    demean_squares(x, plain)
    np.testing.assert_array_equal(out, plain)
    np.testing.assert_allclose(dx, _demean_squares_grad(x, seed), rtol=1e-12, atol=1e-12)
    assert check_gradient(demean_squares, Duplicated(x, np.zeros_like(x)),
                          Duplicated(np.zeros_like(x), seed))


def test_demean_squares_forward(threads):
    x, _, _ = _data()
    v = np.random.default_rng(4).standard_normal(x.shape)
    out, dout = np.zeros_like(x), np.zeros_like(x)
    autodiff(demean_squares, Duplicated(x, v), Duplicated(out, dout), mode=Forward)
    plain = np.zeros_like(x)
    demean_squares(x, plain)
    np.testing.assert_array_equal(out, plain)
    want = 2 * x * v - (2 * x * v).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(dout, want, rtol=1e-12, atol=1e-12)


def test_weighted_demean_reverse(threads):
    x, w, seed = _data()
    dx, dw, out = np.zeros_like(x), np.zeros_like(w), np.zeros_like(x)
    autodiff(weighted_demean, Duplicated(x, dx), Duplicated(w, dw), Duplicated(out, seed.copy()))
    plain = np.zeros_like(x)
    weighted_demean(x, w, plain)
    np.testing.assert_array_equal(out, plain)
    gx, gw = _weighted_grads(x, w, seed)
    np.testing.assert_allclose(dx, gx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dw, gw, rtol=1e-10, atol=1e-12)
    assert check_gradient(weighted_demean, Duplicated(x, np.zeros_like(x)),
                          Duplicated(w, np.zeros_like(w)), Duplicated(np.zeros_like(x), seed))


def test_weighted_demean_forward(threads):
    x, w, _ = _data()
    rng = np.random.default_rng(5)
    vx, vw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    out, dout = np.zeros_like(x), np.zeros_like(x)
    autodiff(weighted_demean, Duplicated(x, vx), Duplicated(w, vw), Duplicated(out, dout),
             mode=Forward)
    c = w * x - (w * x).mean(axis=1, keepdims=True)
    dc = vw * x + w * vx
    dc = dc - dc.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(dout, 2 * c * dc, rtol=1e-10, atol=1e-12)


@njit(parallel=True)
def carried(x, out):
    """Reads its thread's row before the iteration writes it: a value carried between
    iterations on one thread (schedule-dependent): refused."""
    scratch = np.zeros((numba.get_num_threads(), 1))
    for i in prange(x.shape[0]):
        t = numba.get_thread_id()
        out[i] = scratch[t, 0] + x[i]      # read before written
        scratch[t, 0] = x[i]


def test_carried_scratch_refused():
    x = np.linspace(0.1, 1.0, 8)
    with pytest.raises(UnsupportedError) as err:
        autodiff(carried, Duplicated(x, np.zeros(8)), Duplicated(np.zeros(8), np.ones(8)))
    assert "read before the iteration wrote it" in str(err.value)
    assert err.value.location is not None and err.value.location[0] == __file__


@njit(parallel=True)
def const_scratch(x, out):
    """A scratch row read twice per element (its values are kept on the tape)."""
    scratch = np.empty((numba.get_num_threads(), 3))
    for i in prange(x.shape[0]):
        t = numba.get_thread_id()
        for j in range(3):
            scratch[t, j] = x[i] * (j + 1)
        acc = 0.0
        for j in range(3):
            acc += scratch[t, j] * scratch[t, j]
        out[i] = acc


def test_scratch_read_twice():
    x = np.linspace(0.2, 1.1, 9)
    dx = np.zeros(9)
    seed = np.random.default_rng(6).standard_normal(9)
    autodiff(const_scratch, Duplicated(x, dx), Duplicated(np.zeros(9), seed.copy()))
    np.testing.assert_allclose(dx, 2 * 14 * x * seed, rtol=1e-12)


@njit(parallel=True)
def ctypes_thread_rows(x, out):
    """The thread id read through Numba's ctypes handle on the threading layer (an i32 call
    through a function pointer); out[i, j] = 3 x_ij^2 + sum_k x_ik."""
    n, m = x.shape
    scratch = np.empty((numba.get_num_threads(), m))
    for i in prange(n):
        t = numba.np.ufunc.parallel._get_thread_id()
        s = 0.0
        for j in range(m):
            scratch[t, j] = x[i, j] * x[i, j]
            s += x[i, j]
        for j in range(m):
            out[i, j] = 3.0 * scratch[t, j] + s


def test_ctypes_thread_id_both_modes(threads):
    x, _, seed = _data()
    dx, out = np.zeros_like(x), np.zeros_like(x)
    autodiff(ctypes_thread_rows, Duplicated(x, dx), Duplicated(out, seed.copy()))
    plain = np.zeros_like(x)
    ctypes_thread_rows(x, plain)
    np.testing.assert_array_equal(out, plain)
    np.testing.assert_allclose(dx, 6 * x * seed + seed.sum(axis=1, keepdims=True), rtol=1e-12)
    v = np.random.default_rng(7).standard_normal(x.shape)
    dout = np.zeros_like(x)
    autodiff(ctypes_thread_rows, Duplicated(x, v), Duplicated(np.zeros_like(x), dout),
             mode=Forward)
    np.testing.assert_allclose(dout, 6 * x * v + v.sum(axis=1, keepdims=True), rtol=1e-12)
    assert check_gradient(ctypes_thread_rows, Duplicated(x, np.zeros_like(x)),
                          Duplicated(np.zeros_like(x), seed))


@njit(parallel=True)
def demean_two_factors(x, f1, f2, inv1, inv2, out):
    """Fixed-effects demeaning as tuned routines write it: one prange iteration per column, the
    group sums of each factor in the thread's row of a scratch matrix, zeroed, accumulated by
    group id, read by group id. inv*: 1 / group size."""
    n, k = x.shape
    sums = np.empty((numba.get_num_threads(), max(inv1.shape[0], inv2.shape[0])))
    for c in prange(k):
        t = numba.get_thread_id()
        for g in range(sums.shape[1]):
            sums[t, g] = 0.0
        for i in range(n):
            sums[t, f1[i]] += x[i, c]
        for i in range(n):
            out[i, c] = x[i, c] - sums[t, f1[i]] * inv1[f1[i]]
        for g in range(sums.shape[1]):
            sums[t, g] = 0.0
        for i in range(n):
            sums[t, f2[i]] += out[i, c]
        for i in range(n):
            out[i, c] -= sums[t, f2[i]] * inv2[f2[i]]


def _factors(n=13, k=4):
    rng = np.random.default_rng(8)
    f1, f2 = np.arange(n) % 3, rng.integers(0, 4, n)
    f2[:4] = np.arange(4)
    inv1, inv2 = 1.0 / np.bincount(f1), 1.0 / np.bincount(f2)
    return rng.standard_normal((n, k)), f1, f2, inv1, inv2, rng.standard_normal((n, k))


def _projection(f, inv):
    """I - (group averaging) as a matrix."""
    return np.eye(len(f)) - (f[:, None] == f[None, :]) * inv[f][:, None]


def test_fixed_effects_demeaning_both_modes(threads):
    x, f1, f2, inv1, inv2, seed = _factors()
    p = _projection(f2, inv2) @ _projection(f1, inv1)
    fixed = [Const(f1), Const(f2), Const(inv1), Const(inv2)]
    dx, out = np.zeros_like(x), np.zeros_like(x)
    autodiff(demean_two_factors, Duplicated(x, dx), *fixed, Duplicated(out, seed.copy()))
    plain = np.zeros_like(x)
    demean_two_factors(x, f1, f2, inv1, inv2, plain)
    np.testing.assert_array_equal(out, plain)
    np.testing.assert_allclose(plain, p @ x, atol=1e-12)
    np.testing.assert_allclose(dx, p.T @ seed, atol=1e-12)
    v, dout = np.random.default_rng(9).standard_normal(x.shape), np.zeros_like(x)
    autodiff(demean_two_factors, Duplicated(x, v), *fixed, Duplicated(np.zeros_like(x), dout),
             mode=Forward)
    np.testing.assert_allclose(dout, p @ v, atol=1e-12)
    assert check_gradient(demean_two_factors, Duplicated(x, np.zeros_like(x)), *fixed,
                          Duplicated(np.zeros_like(x), seed))


@njit(parallel=True)
def sliced_zeroing(x, f, inv, out):
    """The row zeroed with a slice (`sums[t, :] = 0.0`): Numba passes the slice's length in
    from outside the loop, so that it covers the row is not known; refused, naming the line."""
    sums = np.empty((numba.get_num_threads(), inv.shape[0]))
    for c in prange(x.shape[1]):
        t = numba.get_thread_id()
        sums[t, :] = 0.0
        for i in range(x.shape[0]):
            sums[t, f[i]] += x[i, c]
        for i in range(x.shape[0]):
            out[i, c] = x[i, c] - sums[t, f[i]] * inv[f[i]]


def test_sliced_zeroing_refused_with_its_line():
    x, f1, _, inv1, _, seed = _factors()
    with pytest.raises(UnsupportedError, match="read before the iteration wrote it") as err:
        autodiff(sliced_zeroing, Duplicated(x, np.zeros_like(x)), Const(f1), Const(inv1),
                 Duplicated(np.zeros_like(x), seed))
    assert err.value.location[0] == __file__


@njit(parallel=True)
def demean_energy(x, out):
    """demean_squares followed by differentiated serial code: the launch is split (its reverse
    sweep runs in a second launch, whose tasks may run on other threads)."""
    n, m = x.shape
    scratch = np.empty((numba.get_num_threads(), m))
    for i in prange(n):
        t = numba.get_thread_id()
        for j in range(m):
            scratch[t, j] = x[i, j] * x[i, j]
        s = 0.0
        for j in range(m):
            s += scratch[t, j]
        for j in range(m):
            out[i, j] = scratch[t, j] - s / m
    e = 0.0
    for i in range(n):
        for j in range(m):
            e += out[i, j] * out[i, j]
    return e


def test_split_launch(threads):
    x, _, _ = _data()
    dx, out = np.zeros_like(x), np.zeros_like(x)
    autodiff(demean_energy, Duplicated(x, dx), Duplicated(out, np.zeros_like(x)))
    np.testing.assert_allclose(dx, _demean_squares_grad(x, 2 * out), rtol=1e-12, atol=1e-12)
    assert check_gradient(demean_energy, Duplicated(x, np.zeros_like(x)),
                          Duplicated(np.zeros_like(x), np.zeros_like(x)))


@njit(parallel=True)
def scratch_read_after(x, out):
    """Reads a row after the loop: what is left there depends on the schedule: refused."""
    n, m = x.shape
    scratch = np.empty((numba.get_num_threads(), m))
    for i in prange(n):
        t = numba.get_thread_id()
        for j in range(m):
            scratch[t, j] = x[i, j] * x[i, j]
        for j in range(m):
            out[i, j] = 3.0 * scratch[t, j]
    return scratch[0, 0]       # read after the loop


def test_scratch_read_after_the_loop_refused():
    x, _, seed = _data()
    with pytest.raises(UnsupportedError, match="read after the loop") as err:
        autodiff(scratch_read_after, Duplicated(x, np.zeros_like(x)),
                 Duplicated(np.zeros_like(x), seed))
    assert err.value.location[0] == __file__


@njit(parallel=True)
def zeroed_scratch(x, out):
    """np.zeros for the scratch: under parallel=True its fill is a launch of its own, before the
    loop (not a read after it)."""
    n, m = x.shape
    scratch = np.zeros((numba.get_num_threads(), m))
    for i in prange(n):
        t = numba.get_thread_id()
        for j in range(m):
            scratch[t, j] = x[i, j] * x[i, j]
        for j in range(m):
            out[i, j] = 3.0 * scratch[t, j]


def test_zeroed_scratch(threads):
    x, _, seed = _data()
    dx = np.zeros_like(x)
    autodiff(zeroed_scratch, Duplicated(x, dx), Duplicated(np.zeros_like(x), seed.copy()))
    np.testing.assert_allclose(dx, 6 * x * seed, rtol=1e-12)
