"""Issue 4: helpers, recursion, temporaries, NumPy functions, exceptions and leaks."""
import math

import numba
import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

from enzyme_py import Const, Duplicated, autodiff, check_gradient

rng = np.random.default_rng(3)


@numba.njit
def wiggle(a):
    return a * math.sin(a) + 0.5 * a


@numba.njit
def helper_in_loop(x, y):
    for i in range(x.shape[0]):
        y[i] = wiggle(x[i]) * x[i]


@numba.njit
def two_signatures(x, y):
    y[0] = wiggle(x[0]) * wiggle(x[1]) + wiggle(2)   # wiggle(float64) and wiggle(int64)


@numba.njit
def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


@numba.njit
def recursive_power(x):
    return power(x[0], 5) + power(x[1], 2)


@numba.njit
def fib(a, b, n):
    if n == 0:
        return a
    if n == 1:
        return b
    return fib(a, b, n - 1) + fib(a, b, n - 2)


@numba.njit
def fib_kernel(x):
    return fib(x[0], x[1], 20)


@numba.njit
def is_even(x, n):
    if n == 0:
        return x
    return is_odd(x * 1.1, n - 1)


@numba.njit
def is_odd(x, n):
    if n == 0:
        return -x
    return is_even(x * x, n - 1)


@numba.njit
def mutual(x):
    return is_even(x[0], 5)


@numba.njit
def temporaries(x, y):
    t = np.empty(x.shape[0])
    z = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        t[i] = x[i] * x[i]
        z[i] += t[i] * 0.5
    s = 0.0
    for i in range(x.shape[0]):
        s += t[i] * z[i] + x[i]
    y[0] = s


@numba.njit
def temporary_in_loop(x, y):
    for it in range(20):
        t = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            t[i] = np.sin(x[i] * (it + 1) * 0.1)
        for i in range(x.shape[0]):
            y[i] += t[i] * t[i]


@numba.njit
def numpy_functions(x):
    return np.sum(np.exp(x)) + np.max(x) * 2.0 - np.min(x) + np.sum(np.log(x) * np.sin(x))


@numba.njit
def array_expression(x, y, z, out):
    out[:] = x * y + z


@numba.njit
def views_and_cumsum(x):
    c = np.cumsum(x[1:-1])
    return np.sum(np.sqrt(c)) + np.sum(x[::2] * x[1::2])


@numba.njit
def comprehension(x):
    return np.sum(np.array([v * v for v in x]))


@numba.njit
def dot_products(x, y):
    s = np.dot(x, y) + np.dot(x, x)
    x[0] = 5.0            # overwritten after the dot: the reverse sweep needs the old x
    return s * s


@numba.njit
def gather_scatter(x, idx, y):
    for i in range(x.shape[0]):
        y[idx[i]] += math.exp(x[i])


@numba.njit
def argmax_ties(x):
    m = np.max(x)
    s = 0.0
    c = 0
    for i in range(x.shape[0]):
        if x[i] == m:
            s += x[i]
            c += 1
    return s / c


def arr(n, lo=0.2, hi=0.9):
    return rng.uniform(lo, hi, n)


def dup(a):
    return Duplicated(a, rng.uniform(-1, 1, a.shape))


CASES = {
    "helper_in_loop": lambda: (helper_in_loop, (dup(arr(5)), dup(arr(5)))),
    "two_signatures": lambda: (two_signatures, (dup(arr(2)), dup(arr(1)))),
    "recursive_power": lambda: (recursive_power, (dup(arr(2)),)),
    "mutual_recursion": lambda: (mutual, (dup(arr(1)),)),
    "temporaries": lambda: (temporaries, (dup(arr(6)), dup(arr(1)))),
    "temporary_in_loop": lambda: (temporary_in_loop, (dup(arr(4)), dup(arr(4)))),
    "numpy_functions": lambda: (numpy_functions, (dup(np.array([0.3, 0.8, 0.5, 0.2])),)),
    "array_expression": lambda: (array_expression, (dup(arr(5)), dup(arr(5)), dup(arr(5)), dup(arr(5)))),
    "views_and_cumsum": lambda: (views_and_cumsum, (dup(arr(8)),)),
    "comprehension": lambda: (comprehension, (dup(arr(5)),)),
    "dot_products": lambda: (dot_products, (dup(arr(5)), dup(arr(5)))),
    "gather_scatter": lambda: (gather_scatter, (dup(arr(6)), Const(np.array([2, 0, 2, 1, 3, 0])),
                                                dup(arr(4)))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_finite_differences(name):
    kernel, args = CASES[name]()
    rep = check_gradient(kernel, *args)
    assert rep.passed, str(rep)


def test_fibonacci_double_recursion():
    """fib(a, b, 20) = F(19) a + F(20) b: derivatives 4181 and 6765 times the seed."""
    x, dx = np.array([0.3, 0.7]), np.zeros(2)
    autodiff(fib_kernel, Duplicated(x, dx), seed=2.0)
    assert dx.tolist() == [2 * 4181.0, 2 * 6765.0]


def test_argmax_with_ties_averages():
    x, dx = np.array([0.1, 0.9, 0.3, 0.9]), np.zeros(4)
    autodiff(argmax_ties, Duplicated(x, dx))
    assert np.allclose(dx, [0, 0.5, 0, 0.5])


def live_allocations():
    _nrt_python.memsys_enable_stats()
    s = rtsys.get_allocation_stats()
    return s.alloc - s.free


def test_no_leak_over_10000_calls():
    x, y = arr(8), np.zeros(1)
    autodiff(temporaries, Duplicated(x, np.zeros(8)), Duplicated(y, np.ones(1)))
    before = live_allocations()
    dx, dy = np.zeros(8), np.ones(1)
    for _ in range(10_000):
        autodiff(temporaries, Duplicated(x, dx), Duplicated(y, dy))
    assert live_allocations() == before


@numba.njit
def raises_after_temporary(x, y):
    t = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        t[i] = x[i] * 2.0
    if t[0] > 100.0:
        raise ValueError("first element too large")
    y[0] = np.sum(t)


@numba.njit(boundscheck=True)
def out_of_bounds(x, y):
    for i in range(x.shape[0] + 1):
        y[0] += x[i]


@numba.njit(error_model="python")
def divides(x, y):
    y[0] = 1.0 / x[0]


@pytest.mark.parametrize("kernel, x, exc, msg", [
    (raises_after_temporary, np.array([200.0, 1.0]), ValueError, "first element too large"),
    (out_of_bounds, np.array([1.0, 2.0]), IndexError, "index is out of bounds"),
    (divides, np.array([0.0]), ZeroDivisionError, "division by zero"),
])
def test_exceptions_leave_shadows_and_do_not_leak(kernel, x, exc, msg):
    dx, y, dy = rng.uniform(size=x.shape), np.zeros(1), np.ones(1)
    seeds = (dx.copy(), dy.copy())
    with pytest.raises(exc, match=msg):
        kernel(x.copy(), y.copy())
    with pytest.raises(exc, match=msg):   # compiles the gradient (compiling allocates too)
        autodiff(kernel, Duplicated(x.copy(), dx.copy()), Duplicated(y.copy(), dy.copy()))
    before = live_allocations()
    with pytest.raises(exc, match=msg):
        autodiff(kernel, Duplicated(x, dx), Duplicated(y, dy))
    assert np.array_equal(dx, seeds[0]) and np.array_equal(dy, seeds[1])
    assert live_allocations() == before


@numba.njit
def writes_scratch(x, scratch, y):
    for i in range(x.shape[0]):
        scratch[i] = x[i] * 2.0
    y[0] = np.sum(scratch)


def test_active_data_into_const_array_names_the_argument():
    from enzyme_py import UnsupportedError
    with pytest.raises(UnsupportedError) as e:
        autodiff(writes_scratch, Duplicated(arr(3), np.zeros(3)), Const(np.zeros(3)),
                 Duplicated(np.zeros(1), np.ones(1)))
    msg = str(e.value)
    assert "argument 1 (`scratch`)" in msg and "Duplicated(scratch" in msg
    assert "test_real_kernels.py:" in msg


@numba.njit
def raises_after_recursion(x, y, n):
    s = 0.0
    for i in range(x.shape[0]):
        s += power(x[i], n)
    if s > 100.0:
        raise ValueError("too big")
    y[0] = s


def heap_in_use():
    import ctypes

    class MallInfo(ctypes.Structure):
        _fields_ = [(f, ctypes.c_size_t) for f in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                                   "usmblks", "fsmblks", "uordblks", "fordblks",
                                                   "keepcost")]
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallinfo2"):
        pytest.skip("glibc's mallinfo2 is needed to watch the C heap")
    libc.mallinfo2.restype = MallInfo
    return libc.mallinfo2().uordblks


def test_callee_frames_are_freed_when_the_caller_raises():
    """A recursive callee returned (its tape frame lives on); then the kernel raises: the frame is
    freed without a reverse sweep."""
    assert check_gradient(raises_after_recursion, Duplicated(np.array([0.5, 1.1]), np.zeros(2)),
                          Duplicated(np.zeros(1), np.ones(1)), Const(3)).passed
    x, dx = np.array([5.0, 4.0]), np.zeros(2)

    def burst():
        for _ in range(5000):
            with pytest.raises(ValueError):
                autodiff(raises_after_recursion, Duplicated(x, dx), Duplicated(np.zeros(1), np.ones(1)),
                         Const(3))
    burst()
    before = heap_in_use()
    burst()
    assert heap_in_use() - before < 100_000   # a leak would be ~2.5 MB here


@numba.njit
def float_bits(x, y):
    v = x.view(np.int64)
    y[0] = float(v[0] & 0xFFFF) + x[1]


def test_reading_float_data_as_integers_is_refused():
    from enzyme_py import UnsupportedError
    with pytest.raises(UnsupportedError, match="read as an integer"):
        autodiff(float_bits, Duplicated(np.array([1.5, 2.0]), np.zeros(2)),
                 Duplicated(np.zeros(1), np.ones(1)))
