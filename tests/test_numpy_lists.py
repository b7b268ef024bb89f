"""Numba lists of arrays: np.split and friends, np.broadcast_arrays, list literals and lists grown
by append, in reverse and forward mode against finite differences (fd_modes.check_modes).

A list's payload comes from a handle allocator with an element destructor
(NRT_MemInfo_new_varsize_dtor), is asked for again at every use and moves when the list grows
(NRT_MemInfo_varsize_realloc); its shadow holds the shadows of the arrays kept in it.
"""
import numpy as np
from numba import njit

from enzyme_py import BatchDuplicated, Duplicated, Forward, autodiff
from fd_modes import check_batched_forward, check_modes
from nrt_stats import unfreed


@njit
def chunk_energy(x):
    """Equal chunks, each weighed by its position."""
    s = 0.0
    k = 1.0
    for c in np.split(x, 3):
        s += k * np.sum(c * c)
        k += 1.0
    return s


@njit
def uneven_chunks(x):
    parts = np.array_split(x, 4)
    return np.sum(parts[0] * parts[1][0]) + np.sum(np.sin(parts[3])) - parts[2][-1]


@njit
def column_blocks(A):
    left, mid, right = np.hsplit(A, 3)
    top, rest = np.vsplit(A, [1])
    return np.sum(left * right) + np.sum(mid ** 3) + np.sum(top) * rest[1, 2]


@njit
def broadcast_pair(x, A):
    a, b = np.broadcast_arrays(x, A)
    return np.sum(a * b * b)


@njit
def pick(x, y):
    return np.sum(np.select([x > 0.5, x <= 0.5], [x * y, np.cos(y)]))


@njit
def polynomial_ops(c, d):
    p = np.polynomial.polynomial
    q, r = p.polydiv(p.polymul(c, d), p.polyadd(d, c))
    return np.sum(q * q) + np.sum(r) + np.sum(p.polysub(c, d) ** 2)


@njit
def blocks_in_place(x):
    """A list literal of fresh arrays, changed in place through the list, then summed."""
    blocks = [x[0:3] * 2.0, np.exp(x[3:6]), x[6:9] ** 2]
    for b in blocks:
        b *= 1.5
    for k in range(len(blocks)):
        blocks[k][0] += blocks[k][1] * blocks[k][2]
    s = 0.0
    for b in blocks:
        s += np.sum(np.sin(b))
    return s


@njit
def sliding_windows(x, w):
    """Fresh arrays appended in a loop: the list grows (its payload is reallocated)."""
    parts = []
    for i in range(x.size - w + 1):
        parts.append(x[i:i + w] * (i + 1.0))
    s = 0.0
    for p in parts:
        s += np.sum(p * p) * p[0]
    return s


@njit
def scale_rows(A, out):
    """Views appended in a loop, written through in place."""
    rows = []
    for i in range(A.shape[0]):
        rows.append(out[i])
    for i in range(len(rows)):
        rows[i][:] = A[i] * A[i, 0]
    rows[0][1] += np.sum(rows[-1])


@njit
def split_in_loop(x, n):
    s = 0.0
    for k in range(n):
        for c in np.split(x, 2):
            s += np.sum(c) * c[k]
    return s


def _vec(n, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).uniform(0.2, 1.1, n).astype(dtype)


def test_split_family():
    check_modes(chunk_energy, _vec(9, 1))
    check_modes(uneven_chunks, _vec(10, 2))
    check_modes(column_blocks, _vec(9, 3).reshape(3, 3))


def test_split_of_float32():
    """A list of float32 views (4-byte items; the other splits take the same route)."""
    check_modes(chunk_energy, _vec(9, 1, np.float32), rtol=2e-3)


def test_broadcast_select_polynomials():
    check_modes(broadcast_pair, _vec(4, 4), _vec(12, 5).reshape(3, 4))
    check_modes(pick, _vec(7, 6) - 0.15, _vec(7, 7))
    check_modes(polynomial_ops, _vec(4, 8), _vec(3, 9))


def test_list_literal_changed_in_place():
    check_modes(blocks_in_place, _vec(9, 10))


def test_append_in_loop():
    check_modes(sliding_windows, _vec(11, 11), 3)
    check_modes(scale_rows, _vec(12, 12).reshape(4, 3), np.zeros((4, 3)))
    check_modes(split_in_loop, _vec(6, 13), 3)


def test_batched_forward():
    check_batched_forward(sliding_windows, _vec(8, 14), 3, width=3)
    check_batched_forward(chunk_energy, _vec(6, 15), width=2)


@njit
def float_list(x):
    vals = []
    for i in range(x.size):
        vals.append(x[i] * x[i])
    s = 0.0
    for v in vals:
        s += v * v
    return s


def test_growing_float_list():
    """Floats in a list that grows: forward mode moves the tangents with the list; reverse mode
    moves the adjoints of the kept elements back at each reallocation (reverse/shadows/growing.py)."""
    x = _vec(7, 16)
    v = np.random.default_rng(0).standard_normal(7)
    t = autodiff(float_list, Duplicated(x.copy(), v.copy()), mode=Forward)
    assert np.isclose(t, np.sum(4 * x ** 3 * v), rtol=1e-12)
    dx = np.zeros(7)
    autodiff(float_list, Duplicated(x.copy(), dx), seed=1.0)
    np.testing.assert_allclose(dx, 4 * x ** 3, rtol=1e-12)


def test_shadow_lists_released():
    """Every shadow list and shadow array a call allocates is released (views of the argument:
    the shadow list's items are not references it owns)."""
    x = _vec(9, 17)
    assert unfreed(lambda: autodiff(chunk_energy, Duplicated(x, np.ones(9)), mode=Forward)) == (0, 0)
    assert unfreed(lambda: autodiff(chunk_energy, Duplicated(x, np.zeros(9)), seed=1.0)) == (0, 0)
    assert unfreed(lambda: autodiff(sliding_windows, Duplicated(x, np.zeros(9)), 3, seed=1.0)) == (0, 0)
    lanes = (np.ones(9), np.zeros(9))
    assert unfreed(lambda: autodiff(chunk_energy, BatchDuplicated(x, lanes), mode=Forward)) == (0, 0)
