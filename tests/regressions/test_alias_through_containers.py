"""Fixed: a Const argument sharing memory with a Duplicated array through a tuple, a memoryview or
an ndarray subclass got the gradient compiled for disjoint memory (dy = 0, expected c).

Root cause: the disjointness check (arguments.disjoint) and the fast path's ownership proof
(modes/fast.py) looked at plain ndarrays only. Now every argument's memory takes part
(arguments.memory_of: arrays at any depth of tuples and lists, memoryviews, subclasses, records,
buffers; unknown memory counts as aliased), and the fast path sends containers to the full path.
"""
import numpy as np
import pytest
from numba import njit

from enzyme_py import BatchDuplicated, Const, Duplicated, autodiff


@njit
def through_tuple(y, c, t):
    s = 0.0
    for i in range(y.shape[0]):
        s += y[i] * c[i]
        t[0][i] = 0.0
    return s


@njit
def through_array(y, c, t):
    s = 0.0
    for i in range(y.shape[0]):
        s += y[i] * c[i]
        t[i] = 0.0
    return s


def _wrap(kind, c):
    if kind == "tuple":
        return (c,)
    if kind == "nested":
        return ((1.0, c),)
    if kind == "memmap":
        return c.view(np.memmap)
    return memoryview(c)


@pytest.mark.parametrize("kind", ["tuple", "nested", "memmap", "memoryview"])
def test_const_container_aliasing_duplicated_data(kind):
    kernel = through_array if kind in ("memmap", "memoryview") else through_tuple
    if kind == "nested":
        kernel = njit(lambda y, c, t: _nested(y, c, t))
    y = np.array([1.0, 2.0, 3.0])
    for _ in range(2):                    # the first call fills the fast path's tables
        other = np.array([3.0, 4.0, 5.0])
        dy = np.zeros(3)
        autodiff(kernel, Duplicated(y, dy), Const(other), Const(_wrap(kind, other.copy())))
        np.testing.assert_array_equal(dy, [3.0, 4.0, 5.0])
    for _ in range(2):                    # now the container holds c itself
        c = np.array([3.0, 4.0, 5.0])
        dy = np.zeros(3)
        autodiff(kernel, Duplicated(y, dy), Const(c), Const(_wrap(kind, c)))
        np.testing.assert_array_equal(dy, [3.0, 4.0, 5.0])
        np.testing.assert_array_equal(c, 0.0)     # as a plain call leaves it


@njit
def _nested(y, c, t):
    s = 0.0
    for i in range(y.shape[0]):
        s += y[i] * c[i]
        t[0][1][i] = 0.0
    return s


def test_shadow_inside_a_tuple_is_refused():
    y = np.array([1.0, 2.0, 3.0])
    dy = np.zeros(3)
    with pytest.raises(ValueError, match="shadow shares memory"):
        autodiff(through_tuple, Duplicated(y, dy), Const(np.ones(3)), Const((dy,)))


def test_batched_seed_inside_a_const_is_refused():
    """Batched reverse checked its seeds against each other only."""
    y = np.array([1.0, 2.0, 3.0])
    d1, d2 = np.zeros(3), np.zeros(3)
    with pytest.raises(ValueError, match="shadow shares memory"):
        autodiff(through_tuple, BatchDuplicated(y, (d1, d2)), Const(np.ones(3)), Const((d2,)))
    with pytest.raises(ValueError, match="shadow shares memory"):
        autodiff(through_array, BatchDuplicated(y, (d1, d2)), Const(np.ones(3)), Const(d1))
