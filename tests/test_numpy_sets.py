"""NumPy functions whose result gathers input values (np.fill_diagonal, np.resize; the set
functions and np.extract, built in a Numba list), differentiated in reverse and forward mode
against finite differences and against their derivatives written out (each output element is one
input element, so the gradient of a weighted sum puts the weights back where they came from)."""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, Forward, autodiff
from fd_modes import check_modes


@njit
def weigh(r):
    f = r.ravel()
    s = 0.0
    for i in range(f.size):
        s += f[i] * (1.0 + 0.5 * i)
    return s


@njit
def diagonal_set(A, z):
    c = A.copy()
    np.fill_diagonal(c, z[0] * z[1])
    return weigh(c)


def _weights(n):
    return 1.0 + 0.5 * np.arange(n)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fill_diagonal_fd(dtype):
    A = np.linspace(0.3, 2.0, 12).reshape(4, 3).astype(dtype)
    z = np.array([1.5, -0.7], dtype=dtype)
    check_modes(diagonal_set, A, z, rtol=1e-4 if dtype == np.float32 else 1e-6)


def test_fill_diagonal_analytic():
    A = np.linspace(0.3, 2.0, 12).reshape(4, 3)
    z = np.array([1.5, -0.7])
    dA, dz = np.zeros_like(A), np.zeros(2)
    autodiff(diagonal_set, Duplicated(A, dA), Duplicated(z, dz), seed=1.0)
    w = _weights(12).reshape(4, 3)
    on = np.zeros((4, 3), dtype=bool)
    on[[0, 1, 2], [0, 1, 2]] = True
    np.testing.assert_allclose(dA, np.where(on, 0.0, w))
    wd = w[on].sum()
    np.testing.assert_allclose(dz, [wd * z[1], wd * z[0]])
    t = autodiff(diagonal_set, Duplicated(A, np.zeros_like(A)), Duplicated(z, np.array([1.0, 0.0])),
                 mode=Forward)
    np.testing.assert_allclose(t, wd * z[1])


@njit
def resized(x, n):
    return weigh(np.resize(x, n))


@njit
def resized_2d(x):
    return weigh(np.resize(x * x, (3, 4)))


@pytest.mark.parametrize("n", [3, 5, 9, 12])
def test_resize_fd(n):
    # shorter, as long, longer and a repeat plus a part: n is an argument, so the four sizes
    # run one gradient
    check_modes(resized, np.array([0.4, -1.1, 2.3, 0.9, 1.7]), n)


def test_resize_2d_fd():
    check_modes(resized_2d, np.array([0.4, -1.1, 2.3, 0.9, 1.7]))


def test_resize_analytic():
    """np.resize repeats x to length n: element i of the result is x[i % 5]."""
    x = np.array([0.4, -1.1, 2.3, 0.9, 1.7])
    dx = np.zeros(5)
    autodiff(resized, Duplicated(x, dx), 12, seed=1.0)
    expect = np.zeros(5)
    np.add.at(expect, np.arange(12) % 5, _weights(12))
    np.testing.assert_allclose(dx, expect)
    u = np.linspace(0.5, 1.5, 5)
    t = autodiff(resized, Duplicated(x, u), 12, mode=Forward)
    np.testing.assert_allclose(t, expect @ u)


# --- results built in a Numba list that grows (np.unique, the set functions, np.extract)

@njit
def unique_weighted(x):
    return weigh(np.unique(x))


@njit
def union_weighted(x, y):
    return weigh(np.union1d(x, y))


@njit
def intersect_weighted(x, y):
    return weigh(np.intersect1d(x, y * 1.0))


@njit
def setdiff_weighted(x):
    return weigh(np.setdiff1d(x, np.array([x[2], x[5], 9.0])))


@njit
def setxor_weighted(x, y):
    return weigh(np.setxor1d(x, np.array([x[2], y[0], y[1]])))


@njit
def extract_squared(x, y):
    return weigh(np.extract(y > 0.0, x) ** 2)


@njit
def kept_above(x, t):
    out = []                       # a user's own growing list of floats, used nonlinearly
    for i in range(x.size):
        if x[i] > t:
            out.append(x[i] * x[i])
    r = np.array(out)
    return np.sum(np.sqrt(r) * r)


X = np.array([0.7, -1.3, 2.1, 0.4, 1.6, -0.2, 3.3, 0.9, -2.4, 1.1, 0.05, 2.7])
Y = np.array([4.5, 5.0, -0.6, 8.0, 2.6])      # no value of X: no ties under a small step


@pytest.mark.parametrize("kernel, args", [
    (unique_weighted, (X,)),
    (union_weighted, (X[:6], Y)),
    (setdiff_weighted, (X,)),
    (setxor_weighted, (X[:7], Y)),
    (extract_squared, (X, X - 0.5)),
], ids=["unique", "union1d", "setdiff1d", "setxor1d", "extract"])
def test_gather_fd(kernel, args):
    """Distinct values (the values removed move with the ones that remove them): each output
    element is one input element, finite differences agree."""
    check_modes(kernel, *[a.copy() for a in args])


def test_intersect1d_fd():
    """Values in both inputs: the derivative flows through x's copy (np.intersect1d keeps the
    first of two equal sorted values, which comes from x when the sort puts it first)."""
    x, y = np.array([0.3, 1.7, 2.2, 4.1]), np.array([2.2, 9.0, 0.3])
    dx, dy = np.zeros(4), np.zeros(3)
    autodiff(intersect_weighted, Duplicated(x, dx), Duplicated(y, dy), seed=1.0)
    # the result is [0.3, 2.2] with weights 1.0 and 1.5; each common value's derivative goes to
    # one of its two copies
    np.testing.assert_allclose(dx[[0, 2]] + dy[[2, 0]], [1.0, 1.5])
    np.testing.assert_allclose(dx[[1, 3]], 0.0)
    np.testing.assert_allclose(dy[1], 0.0)


def test_user_list_fd():
    check_modes(lambda_free_kept, X.copy())


@njit
def lambda_free_kept(x):
    return kept_above(x, 0.5)


def test_unique_repeated_values():
    """Repeated values: np.unique keeps one element of each run of equal sorted values, so the
    weight of each unique value goes to one of its copies (the one the sort puts first) and the
    other copies get zero; the gradient summed over each run of equal values is the weight."""
    x = np.array([3.0, 1.0, 2.0, 1.0, 5.0, 3.0, 1.0])
    dx = np.zeros(7)
    autodiff(unique_weighted, Duplicated(x, dx), seed=1.0)
    u = np.unique(x)
    w = _weights(u.size)
    for k, val in enumerate(u):
        run = x == val
        assert np.isclose(dx[run].sum(), w[k])
        assert np.count_nonzero(dx[run]) == 1
    # forward mode: a tangent along each input, the same split
    t = [autodiff(unique_weighted, Duplicated(x, np.eye(7)[j]), mode=Forward) for j in range(7)]
    np.testing.assert_allclose(t, dx)


def test_extract_analytic():
    x = np.array([0.7, -1.3, 2.1, 0.4, 1.6])
    m = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    dx, dm = np.zeros(5), np.zeros(5)
    autodiff(extract_squared, Duplicated(x, dx), Duplicated(m, dm), seed=1.0)
    expect = np.zeros(5)
    expect[[0, 2, 4]] = 2 * x[[0, 2, 4]] * _weights(3)
    np.testing.assert_allclose(dx, expect)
    np.testing.assert_allclose(dm, 0.0)


@njit
def lists_per_pass(x):
    s = 0.0
    for r in range(3):             # a new list each pass, grown past its first capacities
        out = []
        for i in range(x.size):
            if x[i] > 0.2 * r:
                out.append(x[i] * (r + 1.0))
        a = np.array(out)
        s += np.sum(a * a * (1.0 + 0.1 * np.arange(a.size)))
    return s


@njit
def read_before_growth(x):
    out = [x[0] * 1.5]
    v = out[0]                     # read from the buffer the next appends reallocate
    for i in range(1, x.size):
        out.append(x[i] * 2.0)
    s = v * v
    for w in out:
        s += w * w * w
    return s


def test_lists_in_a_loop_fd():
    check_modes(lists_per_pass, np.linspace(0.05, 1.5, 17))


def test_read_before_growth_analytic():
    x = np.linspace(0.5, 1.5, 40)
    dx = np.zeros(40)
    autodiff(read_before_growth, Duplicated(x, dx), seed=1.0)
    expect = 3 * (2 * x) ** 2 * 2
    expect[0] = 2 * 1.5 * 1.5 * x[0] + 3 * (1.5 * x[0]) ** 2 * 1.5
    np.testing.assert_allclose(dx, expect, rtol=1e-12)
    t = autodiff(read_before_growth, Duplicated(x, np.ones(40)), mode=Forward)
    np.testing.assert_allclose(t, expect.sum(), rtol=1e-12)
