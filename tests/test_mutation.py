"""Mutation: the in-place kernels other Python AD tools refuse (issue 3), against finite differences.

Each case also checks that the primal arrays end as a plain call leaves them (check_gradient does).
"""
import numpy as np
import numba
import pytest

from enzyme_py import Active, Const, Duplicated, autodiff, check_gradient

rng = np.random.default_rng(7)


@numba.njit
def square_in_place(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * x[i]


@numba.njit
def use_then_fill(x, out):
    out[0] = np.sum(x * x)
    x[:] = 0.0


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


@numba.njit
def heat(u, k, steps):
    n = u.shape[0]
    new = np.empty(n)
    for t in range(steps):
        for i in range(1, n - 1):
            new[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = new[i]


@numba.njit
def matmul_assign(A, B, C):
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            s = 0.0
            for k in range(A.shape[1]):
                s += A[i, k] * B[k, j]
            C[i, j] = s


@numba.njit
def matmul_accumulate(A, B, C):
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            for k in range(A.shape[1]):
                C[i, j] += A[i, k] * B[k, j]


@numba.njit
def swap_buffers(a, b, steps):
    for t in range(steps):
        for i in range(a.shape[0]):
            b[i] = np.sin(a[i]) + 0.5 * b[i]
        a, b = b, a


@numba.njit
def comprehension(x):
    y = np.array([np.exp(v) * v for v in x])
    return np.sum(y * y)


@numba.njit
def sweep_previous(x):
    for i in range(1, x.shape[0]):
        x[i] = x[i] * x[i - 1]


@numba.njit
def rk4(y, k, dt, steps):
    n = y.shape[0]
    k1 = np.empty(n)
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    tmp = np.empty(n)
    for s in range(steps):
        for i in range(n):
            k1[i] = -k * y[i] * y[i]
            tmp[i] = y[i] + 0.5 * dt * k1[i]
        for i in range(n):
            k2[i] = -k * tmp[i] * tmp[i]
            tmp[i] = y[i] + 0.5 * dt * k2[i]
        for i in range(n):
            k3[i] = -k * tmp[i] * tmp[i]
            tmp[i] = y[i] + dt * k3[i]
        for i in range(n):
            k4[i] = -k * tmp[i] * tmp[i]
            y[i] = y[i] + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


@numba.njit
def insertion_sort_partial_sum(x, out):
    n = x.shape[0]
    for i in range(1, n):
        v = x[i]
        j = i - 1
        while j >= 0 and x[j] > v:
            x[j + 1] = x[j]
            j -= 1
        x[j + 1] = v
    s = 0.0
    for i in range(n // 2):
        s += x[i] * x[i]
    out[0] = s


@numba.njit
def trip_from_array(x, counts, y):
    for i in range(int(counts[0])):
        y[i] = x[i] * x[i] + y[i]
    counts[0] = 0.0


@numba.njit
def offsets_from_memory(x, offs, steps):
    n = x.shape[0]
    for t in range(steps):
        a = int(offs[t])
        b = int(offs[t + 1])
        x[b % n] = np.sin(x[a % n]) * x[b % n]


@numba.njit
def same_array_twice(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i] + 1.0


def arr(*shape):
    return rng.uniform(0.2, 0.9, shape)


def dup(a):
    return Duplicated(a, rng.uniform(-1, 1, a.shape))


CASES = {
    "square_in_place": lambda: (square_in_place, (dup(arr(6)),)),
    "use_then_fill": lambda: (use_then_fill, (dup(arr(5)), dup(arr(1)))),
    "rnn": lambda: (rnn, (dup(arr(4, 4) * 0.5), dup(arr(4, 3) * 0.5), dup(arr(5, 3)), dup(arr(4)))),
    "heat_active_k": lambda: (heat, (dup(arr(12)), Active(0.2), Const(6))),
    "matmul_assign": lambda: (matmul_assign, (dup(arr(3, 4)), dup(arr(4, 2)), dup(arr(3, 2)))),
    "matmul_accumulate": lambda: (matmul_accumulate, (dup(arr(3, 4)), dup(arr(4, 2)), dup(arr(3, 2)))),
    "swap_buffers": lambda: (swap_buffers, (dup(arr(5)), dup(arr(5)), Const(3))),
    "comprehension": lambda: (comprehension, (dup(arr(6)),)),
    "sweep_previous": lambda: (sweep_previous, (dup(arr(7)),)),
    "rk4": lambda: (rk4, (dup(arr(4)), Active(0.7), Const(0.1), Const(5))),
    "insertion_sort": lambda: (insertion_sort_partial_sum,
                               (dup(np.array([0.5, 0.2, 0.9, 0.35, 0.7, 0.1])), dup(arr(1)))),
    "trip_from_array": lambda: (trip_from_array, (dup(arr(6)), Const(np.array([4.0])), dup(arr(6)))),
    "offsets_from_memory": lambda: (offsets_from_memory,
                                    (dup(arr(5)), Const(np.array([0.0, 1, 3, 2, 4, 0, 1])), Const(6))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutation_against_finite_differences(name):
    kernel, args = CASES[name]()
    rep = check_gradient(kernel, *args)
    assert rep.passed, str(rep)


def test_same_array_as_input_and_output():
    """k(x, x): one memory, one shadow; the gradient is that of x <- x*x + 1."""
    x = arr(5)
    dx = rng.uniform(-1, 1, 5)
    seed = dx.copy()
    x0 = x.copy()
    autodiff(same_array_twice, Duplicated(x, dx), Duplicated(x, dx))
    assert np.allclose(x, x0 * x0 + 1.0)
    assert np.allclose(dx, seed * 2 * x0, rtol=1e-12)
