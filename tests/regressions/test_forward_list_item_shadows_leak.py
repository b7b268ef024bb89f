"""Forward mode released no shadow of a fresh array kept in a Numba list (`[x * 2.0, ...]`,
`parts.append(x[i:j] * k)`): one shadow array per item per call (140 allocations over 20 calls
of a 7-window kernel). Tangents were right.

Three causes, fixed in transforms/forward:
- the shadow list was allocated without the list's element destructor, so the reference it holds
  on a fresh item's shadow (taken over from the allocation, as the primal list's is) was never
  dropped; it now gets the destructor, and its header integers (the item count the destructor
  reads) are stored with the primal's; an item that is its own shadow (a view of an argument:
  the argument's handle) is stored as null, so the destructor never releases the caller's
  (owned_items.py);
- a phi merging an item's handle loaded from the list with the list's handle (LLVM sinks their
  decrefs into one call) gave its shadow handles null for the item (state.handle_lanes);
- a decref of a phi of an item's handle and a parameter's handle was not repeated on the shadow
  at all; it is now, released only when the handle is not the parameter (checked at run time,
  allocations.mirror_release).
"""
import numpy as np
import pytest
from numba import njit

from enzyme_py import BatchDuplicated, Duplicated, Forward, autodiff
from fd_modes import check_batched_forward, check_forward
from nrt_stats import unfreed


@njit
def windows(x):
    parts = []
    for i in range(x.size - 2):
        parts.append(x[i:i + 3] * (i + 1.0))
    s = 0.0
    for p in parts:
        s += np.sum(p * p)
    return s


@njit
def fresh_literal(x):
    blocks = [x[0:3] * 2.0, np.exp(x[3:6]), x[6:9] ** 2]
    s = 0.0
    for b in blocks:
        s += np.sum(np.sin(b))
    return s


@njit
def argument_views(x):
    """Views of the Duplicated argument beside fresh arrays: the views' shadows are the caller's."""
    parts = [x[0:3], x[3:6] * 2.0]
    for i in range(3):
        parts.append(x[i + 4:i + 6])
    s = 0.0
    for k in range(len(parts)):
        s += np.sum(parts[k] * parts[k]) * (k + 1.0)
    return s


@njit
def items_replaced(x):
    parts = [x[0:3] * 1.0, x[3:6] * 2.0, x[6:9]]
    parts[0] = x[1:4] * 3.0
    parts[2] = parts[1] * parts[0]
    parts[1] = x[2:5]
    s = 0.0
    for p in parts:
        s += np.sum(np.sin(p))
    return s


@njit
def items_popped(x):
    parts = []
    for i in range(x.size - 2):
        parts.append(x[i:i + 3] * (i + 1.0))
    last = parts.pop()
    first = parts.pop(0)
    s = np.sum(last * first)
    for p in parts:
        s += np.sum(p)
    return s


def _x(n=9):
    return np.random.default_rng(3).uniform(0.2, 1.1, n)


def test_fresh_item_shadows_released():
    x = np.linspace(0.2, 1.0, 7)
    call = lambda: autodiff(windows, Duplicated(x, np.ones(7)), mode=Forward)   # noqa: E731
    assert unfreed(call, 10) == (0, 0)


@pytest.mark.parametrize("kernel", [windows, fresh_literal, argument_views, items_replaced,
                                    items_popped], ids=lambda k: k.__name__)
def test_list_items(kernel):
    """Tangents against central differences, and every allocation released, at widths 1 and 2;
    the caller's shadow (views' items) is neither released nor changed."""
    x = _x()
    check_forward(kernel, x)
    check_batched_forward(kernel, x, width=2)
    dx = np.ones(9)
    assert unfreed(lambda: autodiff(kernel, Duplicated(x, dx), mode=Forward), 10) == (0, 0)
    lanes = (np.ones(9), np.linspace(-1.0, 1.0, 9))
    assert unfreed(lambda: autodiff(kernel, BatchDuplicated(x, lanes), mode=Forward), 10) == (0, 0)
    assert np.array_equal(dx, np.ones(9)) and np.array_equal(lanes[1], np.linspace(-1.0, 1.0, 9))
